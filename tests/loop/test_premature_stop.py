"""Completion checks: ``verify`` and ``checklist`` stand between a final answer and the stop."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import call_turn
from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason
from reactloop.journal.writer import read_journal
from reactloop.loop.command_check import CommandCheck
from reactloop.loop.completion_checks import read_checklist
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "failing_test"
FIX = {
    "path": "calc.py",
    "old_text": "return sum(numbers) / (len(numbers) + 1)",
    "new_text": "return sum(numbers) / len(numbers)",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("script.json", "README.md"))
    return copy


def notices_in(history: Any) -> list[str]:
    return [m.content for m in history if m.role == "user" and m.kind == "notice"]


def test_verify_blocks_a_premature_answer_and_lets_the_fixed_one_through(
    project: Path, tmp_path: Path
) -> None:
    script: list[str | dict[str, Any]] = [
        call_turn("read_file", path="test_calc.py"),
        "Fixed: the tests pass now.",  # premature: nothing was changed
        call_turn("read_file", path="calc.py"),
        call_turn("edit_file", **FIX),
        "Fixed: average divides by len(numbers); the tests pass.",
    ]
    tools = build_tools(("files",), ToolContext(workspace=project))
    check = CommandCheck(
        f"{sys.executable} -m pytest -q -p no:cacheprovider", workspace=project, mode="weak"
    )
    with Journal(tmp_path / "run.jsonl") as journal:
        agent = Agent(ScriptedModel(script), tools, verify=check, journal=journal)
        result = agent.run("Make the failing test pass")
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.error is None
    assert result.answer == "Fixed: average divides by len(numbers); the tests pass."
    refused = notices_in(result.history)
    assert len(refused) == 1 and "not accepted" in refused[0]
    assert "exited with 1" in refused[0] and "test_average" in refused[0]  # pytest's output
    checks = [e for e in read_journal(tmp_path / "run.jsonl") if e["type"] == "check"]
    assert [c["passed"] for c in checks] == [False, True]


def test_an_answer_that_cannot_be_retried_keeps_the_failure_in_error() -> None:
    agent = Agent(
        ScriptedModel(["all done"]), [], verify=lambda answer: "3 tests still fail",
        limits=Limits(max_model_calls=1), protocol="native",
    )  # fmt: skip
    result = agent.run("fix it")
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "all done"
    assert result.error == "the answer failed its check: 3 tests still fail"
    assert any(w.startswith("verify_failed") for w in result.warnings)


def test_a_callable_check_sees_each_answer_and_a_failing_one_refuses() -> None:
    seen: list[str] = []

    def verify(answer: str) -> bool:
        seen.append(answer)
        if len(seen) == 1:
            raise RuntimeError("checker broke")
        return answer == "42"

    agent = Agent(ScriptedModel(["41", "40", "42"]), [], verify=verify, protocol="native")
    result = agent.run("answer")
    assert result.answer == "42" and seen == ["41", "40", "42"]
    refused = notices_in(result.history)
    assert "RuntimeError: checker broke" in refused[0]
    assert "the check refused the answer" in refused[1]


def test_the_checklist_is_shown_once_before_the_first_answer_is_accepted() -> None:
    items = ["calc.average handles an empty list", "every test passes"]
    script: list[str | dict[str, Any]] = [
        "done",
        call_turn("calculator", expression="1+1"),
        "done, both items checked",
    ]
    model = ScriptedModel(script)
    from reactloop.tools.families.calculator import calculator_tool

    result = Agent(model, [calculator_tool()], checklist=items).run("fix calc")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert result.answer == "done, both items checked"
    shown = notices_in(result.history)
    assert len(shown) == 1
    assert "1. calc.average handles an empty list\n2. every test passes" in shown[0]
    assert model.requests[1].messages[-1].content == shown[0]  # the model saw it next


def test_without_checks_nothing_is_added() -> None:
    result = Agent(ScriptedModel(["done"]), [], protocol="native").run("q")
    assert result.answer == "done" and notices_in(result.history) == []


def test_a_forced_answer_is_not_sent_back_to_the_checklist() -> None:
    limits = Limits(max_model_calls=1)
    agent = Agent(ScriptedModel(["done"]), [], checklist=["x"], limits=limits, protocol="native")
    result = agent.run("q")
    assert result.answer == "done" and notices_in(result.history) == []


def test_read_checklist(tmp_path: Path) -> None:
    path = tmp_path / "checklist.md"
    path.write_text(
        "# done when\n- [ ] the tests pass\n* docs updated\n\n3. no new warnings\n[x] typed\n",
        encoding="utf-8",
    )
    assert read_checklist(path) == ["the tests pass", "docs updated", "no new warnings", "typed"]


def test_a_command_check_passes_on_exit_zero(project: Path) -> None:
    assert CommandCheck("true", workspace=project, mode="weak")("answer") is True
    failed = CommandCheck("echo nope; exit 3", workspace=project, mode="weak")("answer")
    assert isinstance(failed, str) and "exited with 3" in failed and "nope" in failed
    json.dumps(failed)


def test_a_command_string_is_refused_with_the_way_to_pass_one() -> None:
    with pytest.raises(TypeError, match="CommandCheck"):
        Agent(ScriptedModel(["x"]), [], verify="pytest -q")  # type: ignore[arg-type]
