"""The report's slow parts off the eval's process: each viewer page is rendered by a child
process as its episode finishes, and the charts are drawn by the same child (or here, when the
child cannot)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.report import html
from reactloop.eval.report import process as report_process
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.run import runner
from reactloop.eval.run.oracle import OracleFactory

STEPS = [{"step": 1, "calls": 2, "input_tokens": 90, "cached_tokens": 0, "seconds": 0.5}]
DATA: dict[str, Any] = {
    "summary": [{"rung": "a", "protocol": "native", "success": 1.0, "ci_low": 0.5,
                 "ci_high": 1.0, "pass_hat_k": 1.0, "k": 2}],
    "per_step": [{"rung": "a", "protocol": "native", "steps": STEPS}],
}  # fmt: skip


def test_the_pages_are_rendered_by_the_child_not_by_the_eval_s_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[Path] = []
    real = getattr(html, "render_html")  # noqa: B009  (the viewer's, as html imported it)

    def counted(path: Path) -> str:
        rendered.append(path)
        return str(real(path))

    monkeypatch.setattr(html, "render_html", counted)
    monkeypatch.setattr(runner, "REPORT_CHILD_FROM", 1)
    out = tmp_path / "out"
    config = _oracle_eval(out, repeats=2, tasks=3)
    outcome = run_eval(config)
    assert rendered == []  # each page came from the child, as its episode finished
    index = (out / "index.html").read_text()
    for record in outcome.records:
        page = out / "pages" / (Path(record.trace or "").stem + ".html")
        assert page.stat().st_size > 0 and f"pages/{page.name}" in index
    assert (out / "success.svg").stat().st_size > 0 and "success.svg" in index


def test_the_child_s_page_is_the_viewer_s_and_a_bad_journal_leaves_none(tmp_path: Path) -> None:
    """The child writes the viewer's page whole (nothing beside it), and no page for a journal
    the viewer cannot read or that is missing: the index's pass then links the journal."""
    out = tmp_path / "out"
    config = _oracle_eval(out, repeats=1, tasks=1, report=False)
    (record,) = run_eval(config).records
    (out / "pages").mkdir()
    render = getattr(html, "render_html")  # noqa: B009  (the viewer's)
    report_process._write_page(out, record.trace, render)
    page = out / "pages" / (Path(record.trace or "").stem + ".html")
    assert page.read_text() == render(out / (record.trace or ""))
    (out / "traces" / "bad.jsonl").write_text("not a journal\n")
    for journal in ("traces/bad.jsonl", "traces/missing.jsonl", None):
        report_process._write_page(out, journal, render)
    assert [p.name for p in (out / "pages").iterdir()] == [page.name]


def test_without_the_child_the_eval_s_process_renders_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[Path] = []
    real = getattr(html, "render_html")  # noqa: B009  (the viewer's, as html imported it)

    def counted(path: Path) -> str:
        rendered.append(path)
        return str(real(path))

    monkeypatch.setattr(html, "render_html", counted)
    monkeypatch.setattr(report_process.ReportProcess, "_start", lambda self: None)
    monkeypatch.setattr(runner, "REPORT_CHILD_FROM", 1)
    config = _oracle_eval(tmp_path / "out", repeats=1, tasks=3)
    run_eval(config)
    assert len(rendered) == 3
    assert (tmp_path / "out" / "steps.svg").stat().st_size > 0


def test_the_child_draws_the_charts(tmp_path: Path) -> None:
    process = ReportProcess()
    assert process._process is not None
    process.draw(tmp_path, DATA)
    assert process.names() == ["success.svg", "steps.svg"]
    assert (tmp_path / "steps.svg").stat().st_size > 0


def test_a_child_that_died_leaves_the_charts_to_this_process(tmp_path: Path) -> None:
    process = ReportProcess()
    process.close()  # as if it had crashed
    process.draw(tmp_path, DATA)
    assert process.names() == ["success.svg", "steps.svg"]
    assert (tmp_path / "success.svg").stat().st_size > 0


def test_a_child_that_never_answers_is_stopped_and_its_work_done_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every wait of the eval has a bound: a child stopped (SIGSTOP) before the charts is
    killed after ``REPORT_SECONDS``, and this process draws them."""
    monkeypatch.setattr(report_process, "REPORT_SECONDS", 1.0)
    process = ReportProcess()
    assert process._process is not None
    os.kill(process._process.pid, signal.SIGSTOP)
    process.draw(tmp_path, DATA)
    assert process.names() == ["success.svg", "steps.svg"]
    assert (tmp_path / "success.svg").stat().st_size > 0


def test_a_small_eval_makes_its_report_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_process.ReportProcess, "_start", _no_child)
    config = _oracle_eval(tmp_path / "out", repeats=1, tasks=2)
    run_eval(config)
    assert (tmp_path / "out" / "index.html").is_file()


def _oracle_eval(out: Path, *, repeats: int, tasks: int, report: bool = True) -> EvalConfig:
    """An eval of the first ``tasks`` arithmetic tasks by the oracle, ``repeats`` times."""
    rung = Rung(label="o", spec="oracle", factory=OracleFactory())
    tried = tuple(load_suite("arithmetic")[:tasks])
    return EvalConfig(
        suite="arithmetic", rungs=(rung,), out=out, repeats=repeats, tasks=tried, fsync=False,
        report=report,
    )  # fmt: skip


def _no_child(self: object) -> None:
    raise AssertionError("a child process for a report of two episodes")
