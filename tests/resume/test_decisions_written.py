"""What ``reactloop approve`` (``record_decisions``) and ``resume --allow`` (``record_policy``)
add to a stopped run's journal: ``approval`` events written by the journal's typed emitter
and writer, under the journal's lock, after the lines that were there (left byte for byte);
each line is one ``ApprovalEvent`` reads and writes back exactly, with the fields it always
had (a policy: no decision, no ``reason``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, ScriptedModel, read_journal, tool
from reactloop.approval import defer_approval
from reactloop.cli.decisions import record_decisions, record_policy, recorded_policy
from reactloop.errors import UsageError
from reactloop.journal.schema import ApprovalEvent

WRITES = [{"id": "w1", "name": "note", "arguments": {"text": "a"}}]
WRITES += [{"id": "w2", "name": "note", "arguments": {"text": "b"}}]


@tool
def note(text: str) -> str:
    """Note text."""
    return text


def deferred(tmp_path: Path) -> Path:
    trace = tmp_path / "run.jsonl"
    model = ScriptedModel([{"tool_calls": WRITES}, "noted"])
    with Journal(trace) as journal:
        result = Agent(model, [note], approve=defer_approval).run("note", journal=journal)
    assert [p.id for p in result.pending] == ["w1", "w2"]
    return trace


def lines(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_bytes().splitlines()]


def test_decisions_are_typed_approval_lines_appended_at_the_runs_last_step(
    tmp_path: Path,
) -> None:
    trace = deferred(tmp_path)
    before = trace.read_bytes()
    stop = read_journal(trace)[-1]
    shown = record_decisions(trace, ["w1"], deny=None, who="ana")
    record_decisions(trace, ["w2"], deny="not b", who="bo")
    assert trace.read_bytes().startswith(before)  # appended: nothing before it changed
    approved, denied = lines(trace)[-2:]
    assert list(approved) == [
        "type", "step", "t", "call_id", "decision", "reason", "who", "at", "name", "arguments",
    ]  # fmt: skip
    assert (approved["step"], approved["call_id"], approved["decision"]) == (
        stop["step"],
        "w1",
        "approve",
    )
    assert approved["t"] >= stop["t"] and approved["reason"] is None
    assert (approved["name"], approved["arguments"]) == ("note", '{"text": "a"}')
    assert (denied["decision"], denied["reason"], denied["who"]) == ("deny", "not b", "bo")
    for line in (approved, denied):
        assert ApprovalEvent.from_dict(line).to_dict() == line
    assert shown[0]["call_id"] == "w1" and shown[0]["question"] is None


def test_a_policy_line_has_its_fields_alone(tmp_path: Path) -> None:
    trace = deferred(tmp_path)
    policy = {"mode": "defer", "allow": ["tool:note"]}
    data = record_policy(trace, policy, who="ana")
    line = lines(trace)[-1]
    assert set(line) == {"type", "step", "t", "policy", "who", "at"}
    assert {k: line[k] for k in ("policy", "who", "at")} == data
    assert ApprovalEvent.from_dict(line).to_dict() == line
    assert recorded_policy(read_journal(trace)) == policy


def test_a_journal_a_live_process_holds_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    trace = deferred(tmp_path)
    before = trace.read_bytes()
    with Journal(trace, append=True), pytest.raises(UsageError, match="live process"):
        record_decisions(trace, ["w1"], deny=None, who="ana")
    assert trace.read_bytes() == before
