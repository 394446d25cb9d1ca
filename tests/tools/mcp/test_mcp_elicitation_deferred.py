"""A server's question in the journal, and a run with nobody to answer it now (a deferred
run): the run stops ``awaiting_approval`` with the call pending and the question recorded;
the person's answer, given through ``Agent.resume(decisions=...)`` or ``reactloop approve
--answer``, is what the server gets when the call runs again and it asks again. Real servers
of both protocol eras (``elicit_server.py``: stdio on the handshake era, stateless HTTP on
the 2026-07-28 era, where the question comes as an ``InputRequiredResult``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import HERE, PORT, served

from reactloop import Agent, Journal, ScriptedModel, read_journal
from reactloop.approval import defer_approval
from reactloop.tools.mcp import (
    ElicitationAnswer,
    ElicitationRequest,
    ServerConfig,
    await_answer,
    open_mcp_tools,
)
from reactloop.viewer.page_data import build_views

SERVER = HERE / "elicit_server.py"
STDIO = ServerConfig(name="shows", command=sys.executable, args=(str(SERVER),),
                     protocol="legacy", call_timeout=30)  # fmt: skip
TURNS = [{"tool_calls": [{"id": "c1", "name": "book", "arguments": {"show": "Hamlet"}}]}, "done"]


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    yield from served(SERVER, "http", PORT)


def turns(tool: str) -> list[Any]:
    return list(json.loads(json.dumps(TURNS).replace('"book"', json.dumps(tool))))


def run(trace: Path, config: ServerConfig, elicit: Any, tool: str = "book") -> Any:
    with open_mcp_tools(servers=[config], elicit=elicit) as tools, Journal(trace) as journal:
        return Agent(ScriptedModel(turns(tool)), tools, journal=journal).run("book Hamlet")


def resume(trace: Path, config: ServerConfig, elicit: Any, tool: str, **options: Any) -> Any:
    with open_mcp_tools(servers=[config], elicit=elicit) as tools:
        return Agent(ScriptedModel(turns(tool)), tools).resume(trace, **options)


def of_type(trace: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_journal(trace) if e["type"] == kind]


def told(trace: Path) -> dict[str, Any]:
    (result,) = [e for e in of_type(trace, "tool_result") if e["result"]["call_id"] == "c1"]
    output: dict[str, Any] = json.loads(result["result"]["output"])
    return output


def test_the_journal_records_the_question_and_the_answer(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    result = run(trace, STDIO, lambda request: ElicitationAnswer("accept", {"seats": 3}))
    assert result.stop_reason == "final_answer"
    (asked,) = of_type(trace, "elicitation")
    assert {k: asked[k] for k in ("server", "call_id", "message", "action", "content")} == {
        "server": "shows", "call_id": "c1", "message": "How many seats for Hamlet?",
        "action": "accept", "content": {"seats": 3, "note": ""}}  # fmt: skip
    assert asked["form"]["properties"]["seats"]["default"] == 2
    assert told(trace)["data"] == {"seats": 3, "note": ""}
    kinds = [e["type"] for e in read_journal(trace)]
    assert kinds.index("tool_start") < kinds.index("elicitation") < kinds.index("tool_result")
    (view,) = build_views(read_journal(trace))
    shown = [w.message for step in view.steps for w in step.warnings if w.kind == "elicitation"]
    assert shown == [
        'shows asks (c1): How many seats for Hamlet? → accept {"seats": 3, "note": ""}'
    ]


def test_an_answer_given_unjournaled_keeps_its_values_out_of_the_journal(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    run(trace, STDIO, lambda request: ElicitationAnswer("accept", {"seats": 3}, journaled=False))
    (asked,) = of_type(trace, "elicitation")
    assert asked["action"] == "accept" and asked.get("content") is None
    assert asked["omitted"] == ["note", "seats"]
    assert told(trace)["data"] == {"seats": 3, "note": ""}  # the server got them all the same


def deferred_then_answered(tmp_path: Path, config: ServerConfig, tool: str) -> Path:
    trace = tmp_path / "run.jsonl"
    stopped = run(trace, config, await_answer, tool)
    assert stopped.stop_reason == "awaiting_approval"
    assert [(p.id, p.name) for p in stopped.pending] == [("c1", tool)]
    (waiting,) = of_type(trace, "elicitation")
    assert (waiting["action"], waiting["message"]) == ("awaiting", "How many seats for Hamlet?")
    assert of_type(trace, "tool_result") == []  # the call has no result: it waits
    answer = {"action": "accept", "content": {"seats": 5}}
    asked: list[ElicitationRequest] = []

    def nobody(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        raise AssertionError("the person's answer is given: nobody else is asked")

    result = resume(trace, config, nobody, tool, decisions={"c1": answer})
    assert result.stop_reason == "final_answer" and asked == []
    return trace


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
def test_a_deferred_run_stops_awaiting_the_answer_and_the_server_gets_it_on_resume(
    tmp_path: Path, modern_url: str, era: str
) -> None:
    if era == "handshake":
        trace = deferred_then_answered(tmp_path, STDIO, "book")
    else:
        config = ServerConfig(name="shows", url=modern_url, call_timeout=30)
        trace = deferred_then_answered(tmp_path, config, "reserve")
    assert told(trace)["action"] == "accept"
    assert told(trace)["data"] == {"seats": 5, "note": ""}
    (approval,) = of_type(trace, "approval")
    assert approval["answer"] == {"action": "accept", "content": {"seats": 5}}
    assert [e["action"] for e in of_type(trace, "elicitation")] == ["awaiting", "accept"]
    (resumed,) = of_type(trace, "resume")
    assert [(c["call_id"], c["state"]) for c in resumed["calls"]] == [("c1", "not_started")]
    assert of_type(trace, "stop")[-1]["tool_calls"] == 1  # the call counts once


def test_the_modern_era_asks_through_the_same_answerer(modern_url: str, tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    config = ServerConfig(name="shows", url=modern_url, call_timeout=30)
    run(trace, config, lambda request: ElicitationAnswer("decline"), "reserve")
    assert told(trace)["action"] == "decline"
    assert [e["action"] for e in of_type(trace, "elicitation")] == ["decline"]


def reactloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-m", "reactloop", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_reactloop_approve_answers_the_question_and_resume_gives_it(tmp_path: Path) -> None:
    """The call waits for approval first, then, run, for its question's answer."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns("reserve")), encoding="utf-8")
    trace, server = tmp_path / "run.jsonl", f"{sys.executable} {SERVER}"  # the era it speaks
    options = ["--model", f"scripted:{script}", "--mcp", server, "--trace", str(trace)]
    first = reactloop("run", "book", *options, "--defer-approval", cwd=tmp_path)
    assert first.returncode == 1 and "pending: c1 reserve" in first.stderr, first.stderr
    unasked = reactloop("approve", str(trace), "--answer", "{}", cwd=tmp_path)
    assert unasked.returncode == 2 and "no pending call asked a question" in unasked.stderr
    unasked = reactloop("approve", str(trace), "c1", "--answer", "{}", cwd=tmp_path)
    assert unasked.returncode == 2 and "c1 asked no question" in unasked.stderr
    both = reactloop("approve", str(trace), "--answer", "{}", "--deny", "no", cwd=tmp_path)
    assert both.returncode == 2 and "not both" in both.stderr
    assert reactloop("approve", str(trace), cwd=tmp_path).returncode == 0
    resume = ["resume", str(trace), "--mcp", server, "--defer-approval"]
    asking = reactloop(*resume, cwd=tmp_path)
    assert asking.returncode == 1 and "pending: c1 reserve" in asking.stderr, asking.stderr
    asks = "Asks    elicit_server: How many seats for Hamlet? → awaiting an answer"
    assert asks in asking.stderr
    refused = reactloop("approve", str(trace), "--answer", "[1]", cwd=tmp_path)
    assert refused.returncode == 2 and "JSON object" in refused.stderr
    approved = reactloop("approve", str(trace), "--answer", '{"seats": 4}', cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert "c1: elicit_server asks: How many seats for Hamlet?" in approved.stdout
    assert 'answered {"action": "accept", "content": {"seats": 4}}' in approved.stdout
    done = reactloop(*resume, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Asks    elicit_server: How many seats for Hamlet? → accept" in done.stderr
    assert told(trace)["data"] == {"seats": 4, "note": ""}
    assert [e["action"] for e in of_type(trace, "elicitation")] == ["awaiting", "accept"]


def test_an_answer_given_after_an_approval_is_the_one_the_server_gets(tmp_path: Path) -> None:
    """Approved first (``decisions={"c1": True}``), the call asks; the answer given next
    replaces that approval in the resumed run, and is journaled."""
    trace = tmp_path / "run.jsonl"
    with open_mcp_tools(servers=[STDIO], elicit=await_answer) as tools, Journal(trace) as journal:
        agent = Agent(ScriptedModel(TURNS), tools, journal=journal, approve=defer_approval)
        assert agent.run("book Hamlet").stop_reason == "awaiting_approval"
    assert of_type(trace, "elicitation") == []  # deferred for approval: it did not run
    asking = resume(trace, STDIO, await_answer, "book", decisions={"c1": True})
    assert asking.stop_reason == "awaiting_approval"
    assert [e["action"] for e in of_type(trace, "elicitation")] == ["awaiting"]
    answer = {"action": "decline"}
    done = resume(trace, STDIO, await_answer, "book", decisions={"c1": answer})
    assert done.stop_reason == "final_answer"
    assert told(trace)["action"] == "decline"
    assert [e.get("answer") for e in of_type(trace, "approval")] == [None, answer]
