"""A resumed parent numbers the children it starts after those its journal records, so a
fresh child never takes an earlier child's place in the tree (``/coder#1``) nor its line in
``reactloop cost``."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import reactloop

from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, read_journal, tool
from reactloop.approval import defer_approval

LIMITS = Limits(max_model_calls=20, max_tool_calls=20)


def coordinator(noted: list[str]) -> Agent:
    """A root that asks its coder, then notes (a call with side effects, which waits for a
    person), then asks its coder again."""

    @tool
    def note(text: str) -> str:
        """Note text."""
        noted.append(text)
        return "noted"

    coder = Agent(ScriptedModel(["coded"]), [], limits=LIMITS)
    turns = [
        {"tool_calls": [{"name": "coder", "arguments": {"task": "first"}}]},
        {"tool_calls": [{"name": "note", "arguments": {"text": "half way"}}]},
        {"tool_calls": [{"name": "coder", "arguments": {"task": "second"}}]},
        "done",
    ]
    return Agent(
        ScriptedModel(turns),
        [coder.as_tool("coder", "Codes."), note],
        approve=defer_approval,
        limits=LIMITS,
    )


def test_a_child_started_after_a_resume_is_numbered_after_the_recorded_ones(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "root.jsonl"
    noted: list[str] = []
    with Journal(trace) as journal:
        first = coordinator(noted).run("go", journal=journal)
    assert first.stop_reason is StopReason.AWAITING_APPROVAL
    (waiting,) = first.pending
    last = coordinator(noted).resume(trace, decisions={waiting.id: True})
    assert (last.answer, noted) == ("done", ["half way"])

    events = read_journal(trace)
    starts = [(e["agent_path"], e["task"]) for e in events if e["type"] == "child_start"]
    assert starts == [("/coder#1", "first"), ("/coder#2", "second")]
    assert sorted(p.name for p in tmp_path.glob("root.*.jsonl")) == [
        "root.coder-1.jsonl",
        "root.coder-2.jsonl",
    ]
    cost = reactloop("cost", str(trace), cwd=tmp_path)
    assert cost.returncode == 0, cost.stderr
    agents = [line.split()[1] for line in cost.stdout.splitlines() if "sub-agent " in line]
    assert agents == ["/coder#1", "/coder#2"]


def test_a_resumed_child_numbers_its_own_children_after_its_recorded_ones(
    tmp_path: Path,
) -> None:
    """The coder (a child) asks its writer, then notes (it waits: the tree stops), and, resumed
    as a child, asks its writer again: ``/coder#1/writer#2``, in a journal of its own."""
    noted: list[str] = []

    @tool
    def note(text: str) -> str:
        """Note text."""
        noted.append(text)
        return "noted"

    def root() -> Agent:
        writer = Agent(ScriptedModel(["written"]), [], limits=LIMITS)
        coder_turns = [
            {"tool_calls": [{"name": "writer", "arguments": {"task": "first"}}]},
            {"tool_calls": [{"name": "note", "arguments": {"text": "half way"}}]},
            {"tool_calls": [{"name": "writer", "arguments": {"task": "second"}}]},
            "coded",
        ]
        coder = Agent(
            ScriptedModel(coder_turns), [writer.as_tool("writer", "Writes."), note], limits=LIMITS
        )
        ask = {"tool_calls": [{"name": "coder", "arguments": {"task": "go"}}]}
        return Agent(
            ScriptedModel([ask, "done"]),
            [coder.as_tool("coder", "Codes.")],
            approve=defer_approval,
            limits=LIMITS,
        )

    trace = tmp_path / "root.jsonl"
    with Journal(trace) as journal:
        result = root().run("go", journal=journal)
    while result.stop_reason is StopReason.AWAITING_APPROVAL:
        result = root().resume(trace, decisions={p.id: True for p in result.pending})
    assert (result.answer, noted) == ("done", ["half way"])
    events = read_journal(tmp_path / "root.coder-1.jsonl")
    starts = [(e["agent_path"], e["task"]) for e in events if e["type"] == "child_start"]
    assert starts == [("/coder#1/writer#1", "first"), ("/coder#1/writer#2", "second")]
    assert sorted(p.name for p in tmp_path.glob("root.*.jsonl")) == [
        "root.coder-1.jsonl",
        "root.coder-1.writer-1.jsonl",
        "root.coder-1.writer-2.jsonl",
    ]
