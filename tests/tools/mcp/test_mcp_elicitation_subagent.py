"""A server's question asked inside a sub-agent of a deferred run: the tree stops
``awaiting_approval`` with the child's call pending by its chained id (``call_0_0/c1``);
``reactloop approve --answer`` finds the question in the child's journal (named by the root's
``child_start``), writes the answer in the root's journal under that id, and ``Agent.resume``
takes it down to the child, whose server gets it when the call runs again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_mcp_elicitation_deferred import STDIO, told, turns

from reactloop import Agent, Journal, ScriptedModel, StopReason, Tool, read_journal
from reactloop.tools.mcp import (
    ElicitationAnswer,
    ElicitationRequest,
    await_answer,
    open_mcp_tools,
)

ASK = {"tool_calls": [{"id": "r1", "name": "booker", "arguments": {"task": "book Hamlet"}}]}


def root(tools: list[Tool]) -> Agent:
    """root → booker; the booker's only tool is the server's ``book``, which asks."""
    booker = Agent(ScriptedModel(turns("book")), tools)
    return Agent(ScriptedModel([ASK, "booked"]), [booker.as_tool("booker", "Books seats.")])


def reactloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "reactloop", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def of_type(trace: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_journal(trace) if e["type"] == kind]


def test_approve_answers_a_question_asked_in_a_sub_agent(tmp_path: Path) -> None:
    trace = tmp_path / "root.jsonl"
    with open_mcp_tools(servers=[STDIO], elicit=await_answer) as tools, Journal(trace) as journal:
        stopped = root(tools).run("book Hamlet", journal=journal)
    assert stopped.stop_reason is StopReason.AWAITING_APPROVAL, stopped.error
    ((key, name, path),) = [(p.id, p.name, p.agent_path) for p in stopped.pending]
    assert (name, path) == ("book", "/booker#1") and key.endswith("/c1")
    (child,) = tmp_path.glob("root.booker-1.jsonl")
    assert [e["action"] for e in of_type(child, "elicitation")] == ["awaiting"]
    assert of_type(trace, "elicitation") == []  # the question is in the child's journal

    wrong = reactloop("approve", str(trace), key, "--answer", "[1]", cwd=tmp_path)
    assert wrong.returncode == 2 and "JSON object" in wrong.stderr
    unknown = reactloop("approve", str(trace), "r1/c9", "--answer", "{}", cwd=tmp_path)
    assert unknown.returncode == 2 and "no pending call r1/c9" in unknown.stderr
    answered = reactloop(
        "approve", str(trace), "--answer", '{"seats": 5}', "--who", "ana", cwd=tmp_path
    )
    assert answered.returncode == 0, answered.stderr
    assert f"{key}: shows asks: How many seats for Hamlet?" in answered.stdout
    shown = f'{key} book {{"show": "Hamlet"}} in /booker#1: answered'
    assert shown in answered.stdout, answered.stdout
    (decided,) = of_type(trace, "approval")
    assert (decided["call_id"], decided["who"]) == (key, "ana")
    assert decided["answer"] == {"action": "accept", "content": {"seats": 5}}

    asked: list[ElicitationRequest] = []

    def nobody(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        raise AssertionError("the person's answer is given: nobody else is asked")

    with open_mcp_tools(servers=[STDIO], elicit=nobody) as tools:
        done = root(tools).resume(trace)
    assert (done.stop_reason, done.answer, asked) == (StopReason.FINAL_ANSWER, "booked", [])
    assert told(child)["data"] == {"seats": 5, "note": ""}  # what the server was told
    assert [e["action"] for e in of_type(child, "elicitation")] == ["awaiting", "accept"]
