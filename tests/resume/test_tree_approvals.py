"""Deferred approvals in a tree of agents (``reactloop.subagent_resume``): a sub-agent's call
that the root's approver defers stops the whole tree ``awaiting_approval``, the root's result
and journal naming the call and the agent it waits in; ``Agent.resume`` with a decision on it
takes the decision down the tree, and the call runs once, in its agent, two levels down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop import (
    Agent,
    Journal,
    Limits,
    ScriptedModel,
    StopReason,
    read_journal,
    tool,
)
from reactloop.approval import defer_approval
from reactloop.result import RunResult

LIMITS = Limits(max_model_calls=20, max_tool_calls=20)


def tree(ran: list[int], approve: Any = defer_approval) -> Agent:
    """root → coder → writer; only the writer has a tool with side effects (``bump``), and
    every call with side effects waits for a person (``defer_approval``, the root's)."""

    @tool
    def bump(n: int) -> str:
        """Count n."""
        ran.append(n)
        return f"bumped {n}"

    writer = Agent(
        ScriptedModel([{"tool_calls": [{"name": "bump", "arguments": {"n": 7}}]}, "bumped"]),
        [bump],
        limits=LIMITS,
    )
    delegate = {"tool_calls": [{"name": "writer", "arguments": {"task": "bump 7"}}]}
    coder = Agent(
        ScriptedModel([delegate, "the writer bumped"]),
        [writer.as_tool("writer", "Writes.")],
        limits=LIMITS,
    )
    ask = {"tool_calls": [{"name": "coder", "arguments": {"task": "get 7 bumped"}}]}
    return Agent(
        ScriptedModel([ask, "done"]),
        [coder.as_tool("coder", "Codes.")],
        approve=approve,
        limits=LIMITS,
    )


def waits_on(result: RunResult) -> list[tuple[str, str, str]]:
    assert result.stop_reason is StopReason.AWAITING_APPROVAL, result.error
    return [(p.name, p.agent_path, p.id) for p in result.pending]


def test_a_grandchilds_deferred_call_stops_the_tree_and_runs_once_when_approved(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "root.jsonl"
    ran: list[int] = []
    with Journal(trace) as journal:
        first = tree(ran).run("go", journal=journal)
    ((name, path, coder_call),) = waits_on(first)  # the root's own call to the coder
    assert (name, path) == ("coder", "")

    second = tree(ran).resume(trace, decisions={coder_call: True})
    ((name, path, key),) = waits_on(second)  # the coder's call to the writer
    assert (name, path) == ("writer", "/coder#1")
    assert key.startswith(f"{coder_call}/")

    third = tree(ran).resume(trace, decisions={key: True})
    ((name, path, bump_key),) = waits_on(third)  # the writer's bump, two levels down
    assert (name, path) == ("bump", "/coder#1/writer#1")
    assert bump_key == f"{key}/call_0_0" == "call_0_0/call_0_0/call_0_0" and ran == []
    stop = read_journal(trace)[-1]
    assert stop["type"] == "stop" and stop["stop_reason"] == "awaiting_approval"
    assert stop["pending"] == [
        {"call_id": bump_key, "name": "bump", "arguments": {"n": 7}, "agent_path": path}
    ]

    last = tree(ran).resume(trace, decisions={bump_key: True})
    assert (last.answer, last.stop_reason) == ("done", StopReason.FINAL_ANSWER)
    assert ran == [7]  # once, in the writer
    assert (last.model_calls, last.tool_calls) == (6, 3)  # each agent's 2 and 1, once
    for journal_path in (trace, *tmp_path.glob("root.*.jsonl")):
        events = read_journal(journal_path)
        assert events[-1]["type"] == "stop", journal_path
        assert events[-1]["stop_reason"] == "final_answer", journal_path
    assert sorted(p.name for p in tmp_path.glob("root.*.jsonl")) == [
        "root.coder-1.jsonl",
        "root.coder-1.writer-1.jsonl",
    ]  # each agent went on in its own journal
    writer_results = [
        e["result"]
        for e in read_journal(tmp_path / "root.coder-1.writer-1.jsonl")
        if e["type"] == "tool_result"
    ]
    assert [r["output"] for r in writer_results] == ["bumped 7"]


def test_a_denial_goes_down_to_the_call_and_the_tree_goes_on(tmp_path: Path) -> None:
    trace = tmp_path / "root.jsonl"
    ran: list[int] = []
    with Journal(trace) as journal:
        (coder_call,) = [p.id for p in tree(ran).run("go", journal=journal).pending]
    (key,) = [p.id for p in tree(ran).resume(trace, decisions={coder_call: True}).pending]
    (bump_key,) = [p.id for p in tree(ran).resume(trace, decisions={key: True}).pending]
    last = tree(ran).resume(trace, decisions={bump_key: "not today"})
    assert (last.answer, ran) == ("done", [])
    seen: list[Any] = [
        e["content"]
        for e in read_journal(tmp_path / "root.coder-1.writer-1.jsonl")
        if e["type"] == "tool_result"
    ]
    assert seen and "not today" in seen[0]


def test_a_grandchilds_call_is_put_to_the_roots_approver_once() -> None:
    asked: list[str] = []

    def approve(call: Any, made: Any) -> bool:
        asked.append(call.name)
        return True

    ran: list[int] = []
    result = tree(ran, approve).run("go")
    assert (result.answer, ran, asked) == ("done", [7], ["coder", "writer", "bump"])
