"""``Agent.resume`` of a run that used the provider's own tool search
(``Agent(tool_search="native")``), against the fake Anthropic server: the resumed requests
carry the provider's search tool and echo its searches, a tool it revealed before the stop is
served after it, and an agent with the other search is refused in one line that says how."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, StopReason, UsageError
from reactloop.journal.writer import read_journal
from reactloop.models.anthropic import AnthropicModel
from reactloop.testing import FakeAnthropicServer, message, tool_use
from search_runs import REPLIES, lookup, multiply


def agent(server: FakeAnthropicServer, **options: Any) -> Agent:
    claude = AnthropicModel(model="claude-test", base_url=server.base_url, max_retries=0)
    limits = Limits(max_model_calls=8, max_tool_calls=1, max_seconds=60)
    return Agent(claude, [multiply, lookup], limits=limits, **options)


def stopped_run(server: FakeAnthropicServer, trace: Path) -> None:
    with Journal(trace) as journal:
        result = agent(server, tool_search="native", journal=journal).run("Tea for the guests?")
    assert result.stop_reason is StopReason.MAX_TOOL_CALLS, result.error


def test_resume_goes_on_with_the_providers_search(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(REPLIES) as server:
        stopped_run(server, trace)
        sent = len(server.requests)
        more = Limits(max_model_calls=8, max_tool_calls=6, max_seconds=60)
        result = agent(server, tool_search="native").resume(trace, limits=more)
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "70", result.error
    body = server.requests[sent].json
    names = [t["name"] for t in body["tools"]]
    assert names == ["multiply", "lookup", "tool_search_tool_bm25"]
    assert [t["name"] for t in body["tools"] if t.get("defer_loading")] == ["lookup"]
    echoed = [b["type"] for b in body["messages"][1]["content"]]
    assert echoed == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    results = [e["result"] for e in read_journal(trace) if e["type"] == "tool_result"]
    assert [r["output"] for r in results if r["name"] == "lookup"] == ["7", "10"]


def test_an_agent_with_the_other_search_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(REPLIES[:2]) as server:
        stopped_run(server, trace)
        before = trace.read_bytes()
        with pytest.raises(UsageError, match=r"tool_search='native' \(--tool-search native\)"):
            agent(server).resume(trace)
    assert trace.read_bytes() == before


def test_a_run_with_the_harnesss_pair_is_not_resumed_with_the_providers(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    calls = [message(content=[tool_use("multiply", {"a": 1, "b": n})]) for n in (2, 3)]
    with FakeAnthropicServer(calls) as server:
        with Journal(trace) as journal:
            result = agent(server, journal=journal, tool_search="own").run("q")
        assert result.stop_reason is StopReason.MAX_TOOL_CALLS, result.error
        with pytest.raises(UsageError, match=r"tool_search='own' \(--tool-search own\)"):
            agent(server, tool_search="native").resume(trace)
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert [t["name"] for t in start["tools"]] == ["multiply", "search_tools", "call_tool"]
