"""Identical calls in one turn: two rolls of a die are two rolls; two reads of one file are one.

The loop guard refuses a repeat only where running it again cannot give anything new, and its
message says which case it is.
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path

from helpers import call
from reactloop import Agent, Journal, ModelTurn, ScriptedModel, StopReason, tool


def _errors(result: object) -> list[str | None]:
    messages = [m for m in result.history if m.role == "tool"]  # type: ignore[attr-defined]
    return [json.loads(m.content).get("error") for m in messages]


def _roll_tool() -> tuple[object, list[int]]:
    rolls: list[int] = []
    faces = count(1)

    @tool
    def roll(sides: int) -> int:
        """Roll a die."""
        rolls.append(next(faces) % sides + 1)
        return rolls[-1]

    return roll, rolls


def test_two_rolls_of_a_die_in_one_turn_both_run() -> None:
    roll, rolls = _roll_tool()
    turn = ModelTurn(tool_calls=(call("roll", "a", sides=6), call("roll", "b", sides=6)))
    result = Agent(ScriptedModel([turn, "rolled"]), [roll]).run("roll two dice")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert len(rolls) == 2 and _errors(result) == [None, None]


def test_the_same_roll_in_a_later_turn_is_refused_without_saying_it_would_not_change() -> None:
    roll, rolls = _roll_tool()
    turns = [ModelTurn(tool_calls=(call("roll", f"c{i}", sides=6),)) for i in range(2)]
    result = Agent(ScriptedModel([*turns, "done"]), [roll]).run("roll")
    error = _errors(result)[1]
    assert len(rolls) == 1 and error is not None
    assert "will not change" not in error and "gives the same result" not in error
    assert "not run again, so that a step is not repeated by mistake" in error


def test_two_identical_reads_in_one_turn_run_once_and_say_why() -> None:
    reads: list[str] = []

    @tool(read_only=True)
    def read(path: str) -> str:
        """Read a file."""
        reads.append(path)
        return "text"

    turn = ModelTurn(tool_calls=(call("read", "a", path="x"), call("read", "b", path="x")))
    result = Agent(ScriptedModel([turn, "done"]), [read]).run("read")
    error = _errors(result)[1]
    assert reads == ["x"] and error is not None
    assert "changes nothing, so calling it again gives the same result" in error


def test_two_identical_idempotent_calls_in_one_turn_run_once_and_say_why() -> None:
    writes: list[str] = []

    @tool(idempotent=True)
    def put(key: str) -> str:
        """Set a key."""
        writes.append(key)
        return "ok"

    turn = ModelTurn(tool_calls=(call("put", "a", key="k"), call("put", "b", key="k")))
    result = Agent(ScriptedModel([turn, "done"]), [put]).run("put")
    error = _errors(result)[1]
    assert writes == ["k"] and error is not None
    assert "Running it again with the same arguments does nothing more" in error


def test_a_resumed_run_counts_the_repeats_of_one_turn_as_the_run_did(tmp_path: Path) -> None:
    both = ModelTurn(tool_calls=(call("roll", "a", sides=6), call("roll", "b", sides=6)))
    turns = [both, *(ModelTurn(tool_calls=(call("roll", f"c{i}", sides=6),)) for i in range(2))]
    path = tmp_path / "full.jsonl"
    roll, _ = _roll_tool()
    with Journal(path) as journal:
        full = Agent(ScriptedModel([*turns, "gave up"]), [roll], journal=journal).run("roll")
    assert full.stop_reason is StopReason.LOOP_DETECTED  # one roll, a warning, then a stop
    lines = path.read_bytes().split(b"\n")
    results = [i for i, line in enumerate(lines) if b'"type":"tool_result"' in line]
    trace = tmp_path / "cut.jsonl"
    trace.write_bytes(b"\n".join(lines[: results[1] + 1]) + b"\n")  # after the turn of two
    roll_again, _ = _roll_tool()
    resumed = Agent(ScriptedModel([*turns, "gave up"]), [roll_again]).resume(trace)
    assert resumed.stop_reason is StopReason.LOOP_DETECTED
    assert [m.to_dict() for m in resumed.history] == [m.to_dict() for m in full.history]
