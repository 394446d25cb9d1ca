"""``reactloop run``'s exit code says whether the answer can be trusted: 0 a clean answer, 1 no
answer, 2 a usage error, 3 an answer that is forced or failed its checks, 130 Ctrl-C
(``test_cli_first_hour``); ``--exit-zero-on-forced`` gives 0 to any answer."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from helpers import invoke, script

ROOT = Path(__file__).resolve().parent.parent.parent
FAILING_TEST = ROOT / "examples" / "failing_test"
CALL = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}


def test_an_answer_refused_by_verify_exits_3_and_the_old_behaviour_is_an_option(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    shutil.copytree(FAILING_TEST, project, ignore=shutil.ignore_patterns("script.json"))
    model = script(tmp_path, [{"content": "Paris"}] * 3)
    args = (
        "run", "Make the failing test pass", "--model", model, "--protocol", "native",
        "--tools", "files,bash", "--workspace", str(project), "--max-steps", "3",
        "--verify", "python -m pytest -q -p no:cacheprovider", "--no-trace",
    )  # fmt: skip
    code, out, err = invoke(*args, "--json")
    assert code == 3, err
    report = json.loads(out)
    assert report["answer"] == "Paris" and report["forced"] is True
    assert report["error"].startswith("the answer failed its check")
    code, out, _ = invoke(*args, "--exit-zero-on-forced")
    assert code == 0 and out.strip() == "Paris"


def test_an_answer_after_a_detected_loop_exits_3(tmp_path: Path) -> None:
    model = script(tmp_path, [CALL, CALL, CALL, {"content": "43.43.43.43"}])
    code, out, err = invoke("run", "What is 2+3?", "--model", model, "--no-trace", "--json")
    assert code == 3, err
    report = json.loads(out)
    assert report["stop_reason"] == "loop_detected" and report["answer"] == "43.43.43.43"


def test_a_clean_answer_exits_0_and_no_answer_exits_1(tmp_path: Path) -> None:
    code, out, _ = invoke("run", "q", "--model", script(tmp_path, [CALL, "5"]), "--no-trace")
    assert (code, out.strip()) == (0, "5")
    empty = script(tmp_path, [CALL])  # the script runs out: model_error, no answer
    code, _, _ = invoke("run", "q", "--model", empty, "--no-trace", "--exit-zero-on-forced")
    assert code == 1


@pytest.mark.parametrize("task", ["", "   \n"])
def test_an_empty_task_is_a_usage_error_in_one_line(tmp_path: Path, task: str) -> None:
    code, out, err = invoke("run", task, "--model", script(tmp_path, ["5"]), "--no-trace")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "reactloop: error: TASK is empty: say what the agent should do"
    ]


def _codes(text: str) -> list[str]:
    """The exit codes a text lists, in order ("Exit 0 with …, 1 …, 130 …")."""
    start = re.search(r"exit(?: codes:)? 0 with", text, re.IGNORECASE)
    assert start is not None, text
    return re.findall(r"\b(0|1|2|3|130) (?:with|without|on|when)\b", text[start.start() :])[:5]


def test_run_help_and_the_readme_state_the_same_exit_codes() -> None:
    code, out, _ = invoke("run", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert _codes(flat) == ["0", "1", "2", "3", "130"]
    assert "3 with an answer that is forced or failed its checks" in flat
    assert "--exit-zero-on-forced" in flat
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert _codes(readme) == ["0", "1", "2", "3", "130"]
    assert "3 with an answer that is forced or failed its checks" in readme
    assert "loop_detected" in readme and "exits 3" in readme  # the main command, on SmolLM2


@pytest.mark.parametrize(
    ("stop", "answer", "forced", "error", "code"),
    [
        ("final_answer", "5", False, None, 0),
        ("final_answer", "5", True, None, 3),
        ("final_answer", "5", False, "the answer failed its check: exit 1", 3),
        ("loop_detected", "5", True, "calculator was called 3 times", 3),
        ("journal_error", "5", False, "disk full", 3),
        ("max_model_calls", None, False, "limit reached", 1),
        ("cancelled", "5", False, "interrupted", 130),
    ],
)
def test_the_exit_code_of_each_kind_of_ending(
    stop: str, answer: str | None, forced: bool, error: str | None, code: int
) -> None:
    from reactloop import RunResult, StopReason, Usage
    from reactloop.cli.exitcodes import run_exit_code

    result = RunResult(
        answer=answer, stop_reason=StopReason(stop), model_calls=1, tool_calls=0,
        usage=Usage(), history=(), seconds=0.0, error=error, forced=forced,
    )  # fmt: skip
    assert run_exit_code(result) == code
    assert run_exit_code(result, zero_on_forced=True) == (0 if code == 3 else code)
