"""Resuming a run of ``tool_search="auto"`` (the default), by ``Agent.resume`` and by
``reactloop resume``, against the fake Anthropic server: ``run_start`` records the search the
run had (``config.tool_search_used``); ``auto`` given again resolves the same way for the same
model and goes on with the provider's search; a search or a deferral other than the recorded
one is refused in one line naming the flag, and the journal is left as it was. A journal
without the record (an older reactloop's) resumes as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke
from reactloop import Agent, Journal, Limits, StopReason, UsageError, tool
from reactloop.journal.writer import read_journal
from reactloop.models.anthropic import AnthropicModel
from reactloop.testing import FakeAnthropicServer, message, tool_use
from reactloop.testing.anthropic_tool_search import search_blocks
from search_runs import NOTES, REPLIES, lookup, multiply

CLAUDE = "claude-sonnet-4-5"  # has Anthropic's tool-search tool


@tool(defer=True, read_only=True)
def divide(a: int, b: int) -> float:
    """Divide two integers."""
    return a / b


def agent(server: FakeAnthropicServer, tools: Any = (multiply, lookup), **options: Any) -> Agent:
    claude = AnthropicModel(model=CLAUDE, base_url=server.base_url, max_retries=0)
    limits = Limits(max_model_calls=8, max_tool_calls=1, max_seconds=60)
    return Agent(claude, list(tools), limits=limits, **options)


def stopped_run(server: FakeAnthropicServer, trace: Path) -> None:
    with Journal(trace) as journal:
        result = agent(server, journal=journal).run("Tea for the guests?")
    assert result.stop_reason is StopReason.MAX_TOOL_CALLS, result.error


def test_an_auto_run_goes_on_with_the_providers_search(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(REPLIES) as server:
        stopped_run(server, trace)
        sent = len(server.requests)
        more = Limits(max_model_calls=8, max_tool_calls=6, max_seconds=60)
        result = agent(server).resume(trace, limits=more)
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "70", result.error
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert start["config"]["tool_search_used"] == {"mode": "native", "deferred": ["lookup"]}
    body = server.requests[sent].json
    assert [t["name"] for t in body["tools"]] == ["multiply", "lookup", "tool_search_tool_bm25"]
    echoed = [b["type"] for b in body["messages"][1]["content"]]
    assert echoed == ["server_tool_use", "tool_search_tool_result", "tool_use"]


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"tool_search": "own"}, r"tool_search='native' \(--tool-search native\)"),
        ({"tools": (multiply, lookup, divide)}, r"defers other tools than the journal's run"),
        ({"tools": (multiply,)}, r"the agent defers none \(--defer-tools\)"),
    ],
)
def test_another_search_or_deferral_is_refused(
    tmp_path: Path, options: dict[str, Any], why: str
) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(REPLIES[:2]) as server:
        stopped_run(server, trace)
        before = trace.read_bytes()
        with pytest.raises(UsageError, match=why):
            agent(server, **options).resume(trace)
    assert trace.read_bytes() == before


def test_a_journal_without_the_record_resumes_as_before(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(REPLIES) as server:
        stopped_run(server, trace)
        lines = trace.read_text().splitlines()
        older = [_without_record(line) for line in lines]
        assert older != lines
        trace.write_text("\n".join(older) + "\n")
        more = Limits(max_model_calls=8, max_tool_calls=6, max_seconds=60)
        with pytest.raises(UsageError, match=r"--tool-search native"):
            agent(server, tool_search="own").resume(trace, limits=more)
        result = agent(server).resume(trace, limits=more)
    assert result.answer == "70", result.error


def _without_record(line: str) -> str:
    event = json.loads(line)
    if event.get("type") == "run_start":
        del event["config"]["tool_search_used"]
    return json.dumps(event, separators=(",", ":"))


def test_reactloop_resume_of_an_auto_run(tmp_path: Path) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps(NOTES))
    trace = tmp_path / "run.jsonl"
    replies = [
        message(
            content=[
                *search_blocks("read a note", ["lookup"]),
                tool_use("lookup", {"key": "price"}),
            ]
        ),
        message(content=[tool_use("calculator", {"expression": "7*10"})]),
        message("70"),
    ]
    with FakeAnthropicServer(replies) as server:
        code, _, err = invoke(
            "run", "Tea?", "--model", f"anthropic:{CLAUDE}", "--base-url", server.base_url,
            "--notes", str(notes), "--trace", str(trace), "--defer-tools", "lookup",
            "--max-tool-calls", "1", "--json",
        )  # fmt: skip
        assert code != 2, err
        assert [t["name"] for t in server.requests[0].json["tools"]][-1] == "tool_search_tool_bm25"
        start = next(e for e in read_journal(trace) if e["type"] == "run_start")
        assert start["config"]["tool_search"] == "auto"
        base = ("resume", str(trace), "--base-url", server.base_url, "--notes", str(notes))
        before = trace.read_bytes()
        code, _, err = invoke(*base, "--tool-search", "own")
        assert code == 2 and "(--tool-search native)" in err
        assert trace.read_bytes() == before
        sent = len(server.requests)
        code, out, err = invoke(*base, "--max-tool-calls", "6", "--json")
        assert code == 0 and json.loads(out)["answer"] == "70", err
    resumed = [t["name"] for t in server.requests[sent].json["tools"]]
    assert resumed == ["calculator", "lookup", "tool_search_tool_bm25"]
