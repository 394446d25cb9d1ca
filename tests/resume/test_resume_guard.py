"""A resumed run's loop guard is the fold of its journal (``journal/guard_fold.py``): it
remembers what the journal says the guard judged, whatever today's tools say of themselves;
the calls of a turn cut in the middle are judged as the uninterrupted run judged them; and a
journal written before ``tool_call``'s ``effects`` resumes as it always did, its guard rebuilt
with today's toolbox (``loop/guard_legacy.py``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool
from reactloop.journal.events import Event
from reactloop.journal.fold import advance
from reactloop.journal.guard_state import GuardState
from reactloop.journal.reader import read_events
from reactloop.journal.run_state import RunState
from reactloop.journal.schema import RunStartEvent
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.tree_budget import current_run
from reactloop.tools.base import Tool

LIMITS = Limits(max_model_calls=20, max_tool_calls=20, max_seconds=None)


@tool(read_only=True)
def peek(key: str) -> str:
    """Read a key."""
    return f"value of {key}"


def _write(read_only: bool) -> Tool:
    """``write``: a tool with side effects, or (``read_only``) one a later version declares
    read-only."""

    def write(text: str) -> str:
        """Write a line."""
        return "written"

    return tool(read_only=read_only)(write)


@tool
def bump(n: int) -> int:
    """Add one (a side effect)."""
    return n + 1


def _turn(*calls: tuple[str, str]) -> ModelTurn:
    made = tuple(ToolCall(id="", name=name, arguments=arguments) for name, arguments in calls)
    return ModelTurn(text="working", tool_calls=made)


PEEK = ("peek", '{"key": "a"}')
WRITE = ("write", '{"text": "x"}')
# peek, then a write (a side effect: the guard forgets the peek), then the same peek again
READ_WRITE_READ = [_turn(PEEK), _turn(WRITE), _turn(PEEK), ModelTurn(text="done")]


def _record(path: Path, turns: list[ModelTurn], tools: list[Tool]) -> list[dict[str, Any]]:
    """The run journaled at ``path``; its history."""
    with Journal(path) as journal:
        result = Agent(ScriptedModel(turns), tools, journal=journal, limits=LIMITS).run("go")
    assert result.stop_reason == "final_answer"
    return [m.to_dict() for m in result.history]


def _cut_after_nth_result(path: Path, n: int, into: Path) -> Path:
    lines = path.read_bytes().split(b"\n")
    results = [i for i, line in enumerate(lines) if b'"type":"tool_result"' in line]
    into.write_bytes(b"\n".join(lines[: results[n - 1] + 1]) + b"\n")
    return into


def _without_effects(path: Path, into: Path) -> Path:
    """The journal as a version before ``effects`` wrote it."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "tool_call":
            assert event.pop("effects", None) is not None  # each was judged: each says so
        lines.append(json.dumps(event))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def _last_peek(history: list[Any]) -> str:
    return [m.content for m in history if m.role == "tool" and m.name == "peek"][-1]


def test_the_resumed_guard_remembers_what_the_journal_says_not_what_the_tool_says_now(
    tmp_path: Path,
) -> None:
    """The write had side effects when it ran: the guard forgot the first peek, so the same
    peek after it runs. Resumed after the write with ``write`` now declared read-only, the
    journal wins: the peek still runs, as it did in the uninterrupted run."""
    full = tmp_path / "full.jsonl"
    uninterrupted = _record(full, READ_WRITE_READ, [peek, _write(read_only=False)])
    trace = _cut_after_nth_result(full, 2, tmp_path / "cut.jsonl")
    written = [e for e in read_events(trace) if e.type == "tool_call"]
    assert [e.effects for e in written] == ["none", "side"]  # what the guard judged, as judged
    resumed = Agent(ScriptedModel(READ_WRITE_READ), [peek, _write(read_only=True)]).resume(trace)
    assert resumed.stop_reason == "final_answer"
    assert "value of a" in _last_peek(list(resumed.history))  # not refused as a repeat
    assert [m.to_dict() for m in resumed.history] == uninterrupted


def test_a_journal_written_before_effects_resumes_its_guard_from_todays_tools(
    tmp_path: Path,
) -> None:
    """Without ``effects`` the journal does not say what the guard judged: the guard is
    rebuilt as it always was, each call judged again with today's tools. With ``write`` now
    read-only, nothing reset the guard: the second peek is a repeat. With ``write`` as it
    was, that old journal resumes to the uninterrupted history."""
    full = tmp_path / "full.jsonl"
    uninterrupted = _record(full, READ_WRITE_READ, [peek, _write(read_only=False)])
    cut = _cut_after_nth_result(full, 2, tmp_path / "cut.jsonl")
    old = _without_effects(cut, tmp_path / "old.jsonl")
    flipped = Agent(ScriptedModel(READ_WRITE_READ), [peek, _write(read_only=True)]).resume(old)
    assert "you already called peek" in _last_peek(list(flipped.history))
    old = _without_effects(cut, tmp_path / "old_again.jsonl")
    same = Agent(ScriptedModel(READ_WRITE_READ), [peek, _write(read_only=False)]).resume(old)
    assert [m.to_dict() for m in same.history] == uninterrupted


TWICE = [_turn(("bump", '{"n": 1}'), ("bump", '{"n": 1}')), _turn(PEEK), ModelTurn(text="done")]


def test_a_call_asked_for_twice_in_a_turn_cut_between_them_runs_twice(tmp_path: Path) -> None:
    """Two identical calls of a tool with side effects in one turn are meant as two. Cut after
    the first ran, the resumed loop judges the second in the same turn: it runs, as it did
    in the uninterrupted run (it is not refused as a repeat of the first)."""
    full = tmp_path / "full.jsonl"
    uninterrupted = _record(full, TWICE, [peek, bump])
    trace = _cut_after_nth_result(full, 1, tmp_path / "cut.jsonl")
    resumed = Agent(ScriptedModel(TWICE), [peek, bump]).resume(trace)
    bumps = [m.content for m in resumed.history if m.role == "tool" and m.name == "bump"]
    assert bumps == ['{"ok": true, "output": 2}'] * 2
    assert [m.to_dict() for m in resumed.history] == uninterrupted


def _resumed_guards(trace: Path, turns: list[ModelTurn], tools: list[Tool]) -> list[GuardState]:
    """The journal resumed: the live guard's memory at each event the resumed loop wrote."""
    live: list[GuardState] = []

    def sink(event: Event) -> None:
        loop = current_run()
        assert isinstance(loop, RunLoop)
        live.append(copy.deepcopy(loop.calls.guard.state))

    result = Agent(ScriptedModel(turns), tools, observers=[sink]).resume(trace)
    assert result.stop_reason == "final_answer", trace.name
    return live


@pytest.mark.parametrize("script", ["read_write_read", "twice"])
def test_after_a_resume_the_fold_of_the_whole_journal_is_the_resumed_guard(
    tmp_path: Path, script: str
) -> None:
    """Cut at every event and resumed: at each event the resumed loop writes, the fold of the
    journal so far (the run, its ``resume``, what followed) is the resumed live guard's
    ``GuardState`` (the open calls' checks taken back at the ``resume``)."""
    turns, tools = (
        (READ_WRITE_READ, [peek, _write(read_only=False)])
        if script == "read_write_read"
        else (TWICE, [peek, bump])
    )
    full = tmp_path / "full.jsonl"
    _record(full, turns, tools)
    total = len(full.read_bytes().split(b"\n")) - 1
    for lines in range(3, total):
        trace = tmp_path / f"cut{lines}.jsonl"
        trace.write_bytes(b"\n".join(full.read_bytes().split(b"\n")[:lines]) + b"\n")
        before = len(read_events(trace))
        live = _resumed_guards(trace, turns, tools)
        events = read_events(trace)
        start = max(i for i, e in enumerate(events) if isinstance(e, RunStartEvent))
        state = RunState()
        for event in events[start:before]:
            advance(state, event)
        for index, event in enumerate(events[before:]):
            advance(state, event)
            assert state.guard.state == live[index], f"cut {lines}: {event.type} {index}"
