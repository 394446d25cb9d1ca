"""The report's fixed cost moved off the end of the eval: each viewer page is written by its
episode's thread as it finishes, and the charts are drawn by a child process that imported
matplotlib while the episodes ran (or here, when the child cannot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.chart_process import ChartProcess
from reactloop.eval.oracle import OracleFactory

pytest.importorskip("matplotlib")

STEPS = [{"step": 1, "calls": 2, "input_tokens": 90, "cached_tokens": 0, "seconds": 0.5}]
DATA: dict[str, Any] = {
    "summary": [{"rung": "a", "protocol": "native", "success": 1.0, "ci_low": 0.5,
                 "ci_high": 1.0, "pass_hat_k": 1.0, "k": 2}],
    "per_step": [{"rung": "a", "protocol": "native", "steps": STEPS}],
}  # fmt: skip


def test_each_page_exists_when_its_episode_is_recorded_and_is_not_rendered_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    seen: list[tuple[Path, float]] = []

    def recorded(record: dict[str, Any]) -> None:
        page = out / "pages" / (Path(record["trace"]).stem + ".html")
        assert page.is_file(), f"no page yet for {record['key']}"
        seen.append((page, page.stat().st_mtime_ns))

    rung = Rung(label="o", spec="oracle", factory=OracleFactory())
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=out,
        repeats=2,
        tasks=tuple(load_suite("arithmetic")[:3]),
        fsync=False,
    )
    run_eval(config, on_record=recorded)
    assert len(seen) == 6
    assert all(page.stat().st_mtime_ns == mtime for page, mtime in seen)
    index = (out / "index.html").read_text()
    assert all(f"pages/{page.name}" in index for page, _ in seen)
    assert (out / "success.png").stat().st_size > 0 and "success.png" in index


def test_the_child_draws_the_charts(tmp_path: Path) -> None:
    process = ChartProcess()
    assert process._process is not None
    process.draw(tmp_path, DATA)
    assert process.names() == ["success.png", "steps.png"]
    assert (tmp_path / "steps.png").stat().st_size > 0


def test_a_child_that_died_leaves_the_charts_to_this_process(tmp_path: Path) -> None:
    process = ChartProcess()
    process.close()  # as if it had crashed
    process.draw(tmp_path, DATA)
    assert process.names() == ["success.png", "steps.png"]
    assert (tmp_path / "success.png").stat().st_size > 0
