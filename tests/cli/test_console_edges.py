"""What the console prints at the edges: a final thought labelled like the earlier ones, counts
in the singular, a refused ``--verify`` as its tail, and ``--max-steps 1`` said to allow no tool.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from helpers import invoke, script
from reactloop import read_journal
from reactloop.cli.console import CHECK_TAIL_LINES, ConsoleObserver
from reactloop.journal.events import Event

ROOT = Path(__file__).resolve().parent.parent.parent
CALL = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}


def test_a_final_thought_given_as_reasoning_is_labelled_reason_like_the_earlier_ones(
    tmp_path: Path,
) -> None:
    """The local models' JSON ``thought`` is a tool call's text and reasoning alike, and on the
    final answer its reasoning only; a provider's reasoning channel stays ``thinking:``."""
    thought = {**CALL, "content": "I add them.", "reasoning": "I add them."}
    final = {"content": "5", "reasoning": "The calculator said 5."}
    model = script(tmp_path, [thought, final])
    code, out, err = invoke("run", "q", "--model", model, "--protocol", "native", "--no-trace")
    assert (code, out.strip()) == (0, "5"), err
    lines = err.splitlines()
    assert "  Reason  I add them." in lines
    assert "  Reason  The calculator said 5." in lines
    assert not any("thinking:" in line for line in lines)
    other = script(tmp_path, [{**CALL, "reasoning": "hidden"}, final])
    _, _, err = invoke("run", "q", "--model", other, "--protocol", "native", "--no-trace")
    assert "  thinking: The calculator said 5." in err.splitlines()


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    code, _, err = invoke("run", "q", "--model", script(tmp_path, [CALL, "5"]), "--no-trace")
    assert code == 0
    assert "stop: final_answer · 2 model calls · 1 tool call · " in err
    answer = script(tmp_path, [{"content": "5"}])
    code, _, err = invoke("run", "q", "--model", answer, "--protocol", "native", "--no-trace")
    assert code == 0 and "· 1 model call · 0 tool calls · " in err


def test_a_refused_verify_shows_its_tail_and_the_journal_keeps_the_whole_output(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "failing_test", project)
    trace = tmp_path / "run.jsonl"
    model = script(tmp_path, [{"content": "done"}] * 2)
    code, _, err = invoke(
        "run", "fix it", "--model", model, "--protocol", "native", "--workspace", str(project),
        "--tools", "files", "--max-steps", "2", "--trace", str(trace),
        "--verify", "python -m pytest -q -p no:cacheprovider",
    )  # fmt: skip
    assert code == 3
    output = next(r["output"] for r in read_journal(trace) if r["type"] == "check")
    lines = output.strip().splitlines()
    assert len(lines) > CHECK_TAIL_LINES + 2  # pytest's whole report
    assert err.count("verify_failed: `python -m pytest -q -p no:cacheprovider` exited with 1") == 2
    assert err.count("2 failed, 2 passed in") == 2  # pytest's last line, once a step
    assert lines[1].strip() not in err  # its head stays in the journal
    assert "earlier lines not shown" in err
    assert "(the answer failed its check: `python -m pytest" in err


def test_a_short_refusal_is_shown_whole_and_a_passed_check_not_at_all() -> None:
    console = Console(record=True, width=200)
    observer = ConsoleObserver(console)
    observer(
        Event("check", 1, {"kind": "verify", "passed": False, "output": "`x` exited with 1:\nno"})
    )
    observer(Event("check", 2, {"kind": "verify", "passed": True, "output": None}))
    observer(Event("warning", 1, {"kind": "verify_failed", "message": "`x` exited with 1"}))
    assert console.export_text().splitlines() == ["  ! verify_failed: `x` exited with 1:", "    no"]


def test_max_steps_1_says_no_tool_can_run(tmp_path: Path) -> None:
    model = script(tmp_path, [{"content": "5"}])
    args = ("run", "q", "--model", model, "--protocol", "native", "--no-trace")
    code, _, err = invoke(*args, "--max-steps", "1")
    assert code == 3  # the one call was told to answer now
    assert "no tool can run" in err
    code, _, err = invoke(*args, "--max-steps", "2")
    assert code == 0 and "no tool can run" not in err
    _, out, _ = invoke("run", "--help")
    assert "so 1 allows no tool call" in " ".join(out.split())
