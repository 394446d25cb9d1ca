"""Ctrl-C in the windows the campaign (``test_ctrl_c_campaign.py``) finds at random, each hit
on purpose: a real SIGINT to this process, sent by an observer at a chosen event; and what an
approver or an observer may raise (``SystemExit``, ``GeneratorExit``, ``KeyboardInterrupt``).

Each run is wrapped so that a ``KeyboardInterrupt`` that escapes fails the test instead of
ending the pytest session.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    Agent,
    Event,
    FunctionModel,
    Journal,
    Limits,
    ModelRequest,
    ScriptedModel,
    StopReason,
    Tool,
    read_journal,
    tool,
)


@tool
def write(n: int) -> str:
    """Write n (a side effect)."""
    WRITTEN.append(n)
    return f"wrote {n}"


WRITTEN: list[int] = []
CALL_1 = {"name": "write", "arguments": {"n": 1}}
CALL_2 = {"name": "write", "arguments": {"n": 2}}
TWO_CALLS: list[Any] = [{"tool_calls": [CALL_1, CALL_2]}, "done"]


def ctrl_c_at(*types: str, times: int = 1) -> Callable[[Event], None]:
    """An observer that sends this process a SIGINT at each of the first ``times`` events of
    ``types``."""
    sent: list[str] = []

    def observe(event: Event) -> None:
        if event.type in types and len(sent) < times:
            sent.append(event.type)
            os.kill(os.getpid(), signal.SIGINT)

    return observe


def run(tmp_path: Path, model: Any, **agent: Any) -> tuple[Any, list[dict[str, Any]]]:
    WRITTEN.clear()
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        try:
            result = Agent(model, [write], journal=journal, **agent).run("q")
        except KeyboardInterrupt:
            pytest.fail("KeyboardInterrupt escaped Agent.run")
    return result, read_journal(path)


def results_by_call(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["type"] == "tool_result":
            found.setdefault(r["result"]["call_id"], []).append(r["result"])
    return found


def test_a_ctrl_c_as_a_result_is_journaled_keeps_it_once(tmp_path: Path) -> None:
    """The window between "the tool returned" and "its result is recorded" (a run without a
    time limit: on the caller's thread, where the signal lands)."""
    observer = ctrl_c_at("tool_result")
    limits = Limits(max_seconds=None)
    result, records = run(tmp_path, ScriptedModel(TWO_CALLS), observers=[observer], limits=limits)
    assert result.stop_reason is StopReason.CANCELLED
    assert WRITTEN == [1]  # the second call never started
    found = results_by_call(records)
    assert [len(v) for v in found.values()] == [1, 1]
    first, second = (v[0] for v in found.values())
    assert first["ok"] and first["output"] == "wrote 1"
    assert not second["ok"] and second["error"].startswith("cancelled")
    tool_messages = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert tool_messages[0] == {"ok": True, "output": "wrote 1"}
    assert len(tool_messages) == 2
    assert records[-1]["type"] == "stop"


def test_a_ctrl_c_during_a_limited_run_keeps_each_result_once(tmp_path: Path) -> None:
    """Under a time limit the run is on a thread of its own and the caller's thread sees the
    Ctrl-C within its 50 ms slice, so the next call may already have run: whichever did keeps
    its real result, once, and the journal ends with its ``stop``."""
    observer = ctrl_c_at("tool_result")
    model = ScriptedModel(TWO_CALLS)
    result, records = run(tmp_path, model, observers=[observer], limits=Limits(max_seconds=60.0))
    found = results_by_call(records)
    assert [len(v) for v in found.values()] == [1, 1]
    ran = [r for (r,) in found.values() if r["ok"]]
    assert [r["output"] for r in ran] == [f"wrote {n}" for n in WRITTEN]
    assert records[-1]["type"] == "stop"
    assert result.stop_reason in (StopReason.CANCELLED, StopReason.FINAL_ANSWER)


def test_ctrl_c_again_and_again_while_the_run_finishes_still_ends_with_its_stop(
    tmp_path: Path,
) -> None:
    kinds = ("tool_result", "warning", "stop")
    observer = ctrl_c_at(*kinds, times=10)
    limits = Limits(max_seconds=None)  # on the caller's thread, where the signal lands at once
    result, records = run(tmp_path, ScriptedModel(TWO_CALLS), observers=[observer], limits=limits)
    assert result.stop_reason is StopReason.CANCELLED
    assert [r["type"] for r in records].count("stop") == 1
    assert records[-1]["type"] == "stop" and records[-1]["stop_reason"] == "cancelled"
    assert [len(v) for v in results_by_call(records).values()] == [1, 1]


def test_a_ctrl_c_after_the_answer_keeps_the_answer(tmp_path: Path) -> None:
    observer = ctrl_c_at("turn", times=3)
    model = ScriptedModel(["the answer"])
    result, records = run(tmp_path, model, observers=[observer], protocol="native")
    assert result.answer == "the answer"
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert records[-1]["stop_reason"] == "final_answer"


def test_a_ctrl_c_during_the_model_call_stops_it_at_once(tmp_path: Path) -> None:
    ended = threading.Event()

    def slow(request: ModelRequest) -> str:
        os.kill(os.getpid(), signal.SIGINT)
        threading.Event().wait(30)  # interrupted by the KeyboardInterrupt, not waited out
        ended.set()
        return "too late"

    result, records = run(tmp_path, FunctionModel(slow))
    assert not ended.is_set()
    assert result.stop_reason is StopReason.CANCELLED
    assert records[-1]["stop_reason"] == "cancelled"


def test_a_ctrl_c_during_a_tool_on_the_loops_thread_interrupts_it(tmp_path: Path) -> None:
    ended = threading.Event()

    @tool
    def hang(n: int) -> str:
        """Hang."""
        os.kill(os.getpid(), signal.SIGINT)
        threading.Event().wait(30)
        ended.set()
        return "too late"

    model = ScriptedModel([{"tool_calls": [{"name": "hang", "arguments": {"n": 1}}]}, "x"])
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        try:
            agent = Agent(model, [hang], journal=journal, limits=Limits(max_seconds=None))
            result = agent.run("q")
        except KeyboardInterrupt:
            pytest.fail("KeyboardInterrupt escaped Agent.run")
    assert not ended.is_set()
    assert result.stop_reason is StopReason.CANCELLED
    (outcome,) = results_by_call(read_journal(path)).values()
    assert outcome[0]["error"] == "cancelled: the run was interrupted while it ran"


def raising(error: BaseException) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        raise error

    return call


def test_an_approver_raising_keyboard_interrupt_cancels_the_run(tmp_path: Path) -> None:
    approve = raising(KeyboardInterrupt())
    result, records = run(tmp_path, ScriptedModel(TWO_CALLS), approve=approve)
    assert result.stop_reason is StopReason.CANCELLED
    assert WRITTEN == []
    errors = [v[0]["error"] for v in results_by_call(records).values()]
    assert errors == ["not run: the run was cancelled at its approval", "not executed: cancelled"]
    assert records[-1]["type"] == "stop"


@pytest.mark.parametrize("error", [SystemExit(3), GeneratorExit(), BaseException("odd")])
def test_an_approver_raising_another_base_exception_declines_the_call(
    tmp_path: Path, error: BaseException
) -> None:
    result, records = run(tmp_path, ScriptedModel(TWO_CALLS), approve=raising(error))
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "done"
    assert WRITTEN == []
    errors = [v[0]["error"] for v in results_by_call(records).values()]
    assert all(e.startswith("not run: the approval check failed") for e in errors), errors
    assert type(error).__name__ in errors[0]
    assert records[-1]["type"] == "stop"


@pytest.mark.parametrize(
    "error", [SystemExit(3), GeneratorExit(), KeyboardInterrupt(), BaseException("odd")]
)
def test_an_observer_raising_anything_is_dropped_with_a_warning(
    tmp_path: Path, error: BaseException
) -> None:
    result, records = run(tmp_path, ScriptedModel(TWO_CALLS), observers=[raising(error)])
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "done"
    assert WRITTEN == [1, 2]
    assert any(w.startswith("observer_failed:") for w in result.warnings)
    assert records[-1]["type"] == "stop"


@pytest.mark.parametrize("error", [SystemExit(3), GeneratorExit(), KeyboardInterrupt()])
def test_a_journal_raising_a_base_exception_ends_the_run_loudly(error: BaseException) -> None:
    seen: list[str] = []

    def journal(event: Event) -> None:
        seen.append(event.type)
        if event.type == "turn":
            raise error

    try:
        result = Agent(ScriptedModel(TWO_CALLS), [write], journal=journal).run("q")
    except BaseException:
        pytest.fail("the journal's exception escaped Agent.run")
    assert result.stop_reason is StopReason.JOURNAL_ERROR
    assert type(error).__name__ in (result.error or "")
    assert seen[-1] == "stop"


def test_a_ctrl_c_just_as_a_tool_returns_keeps_its_result(tmp_path: Path) -> None:
    """The tool is ``os.kill`` itself (C, no frame of its own): the SIGINT is handled the
    moment it returns, in ``interruptibly``'s own lines, and the call keeps its result."""
    press = functools.partial(os.kill, os.getpid(), signal.SIGINT)
    schema = {"type": "object", "properties": {}}
    tool_ = Tool.from_schema("press", "Press Ctrl-C.", schema, press, strict=False)
    model = ScriptedModel([{"tool_calls": [{"name": "press", "arguments": {}}] * 2}, "x"])
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        try:
            limits = Limits(max_seconds=None, repeat_warn=5, repeat_stop=5)
            result = Agent(model, [tool_], journal=journal, limits=limits).run("q")
        except KeyboardInterrupt:
            pytest.fail("KeyboardInterrupt escaped Agent.run")
    assert result.stop_reason is StopReason.CANCELLED
    first, second = (v[0] for v in results_by_call(read_journal(path)).values())
    assert first["ok"] is True, first  # it ran and returned: its real result
    assert second["ok"] is False and second["error"].startswith("cancelled")
