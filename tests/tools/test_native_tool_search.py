"""The provider's own tool search (``Agent(tool_search="native")``): Anthropic's tool-search
tool over ``defer_loading`` tools, against the fake server, which searches the request's
deferred tools and answers in the documented wire shape; the same shape read by the real
``anthropic`` SDK. Elsewhere the harness's own ``search_tools`` serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, tool
from reactloop.journal.writer import read_journal
from reactloop.messages import ModelTurn, ServerToolSearch
from reactloop.models.anthropic import AnthropicModel
from reactloop.testing import FakeAnthropicServer, message, tool_use
from reactloop.testing.anthropic_tool_search import (
    search_blocks,
    searching,
    server_search,
    tool_search_problem,
)
from reactloop.tools.base import Tool, make_tool
from reactloop.tools.search import deferred
from reactloop.tools.toolbox import Toolbox

LIMITS = Limits(max_model_calls=6, max_tool_calls=6, max_seconds=60)
filed: list[tuple[str, str]] = []


@tool(defer=True)
def github_create_issue(repo: str, title: str) -> str:
    """Create an issue in a GitHub repository.

    Args:
        repo: owner/name
        title: the issue's title
    """
    filed.append((repo, title))
    return f"{repo}#101"


@tool
def clock() -> str:
    """The time now."""
    return "09:00"


def family(prefix: str, verbs: list[str]) -> list[Tool]:
    made = []
    for verb in verbs:

        def action(target: str) -> str:
            return "ok"

        action.__name__ = f"{prefix}_{verb}"
        action.__doc__ = f"{verb.replace('_', ' ').capitalize()} in {prefix}."
        made.append(deferred(make_tool(action)))
    return made


TOOLS = [
    clock,
    github_create_issue,
    *family("github", ["list_pulls", "merge_pull", "close_issue", "add_label"]),
    *family("slack", ["send_message", "list_channels", "archive_channel"]),
]


def run(server: FakeAnthropicServer, trace: Path, **model: Any) -> Any:
    with Journal(trace) as journal:
        claude = AnthropicModel(
            model="claude-test", base_url=server.base_url, max_retries=0, **model
        )
        agent = Agent(claude, TOOLS, journal=journal, limits=LIMITS, tool_search="native")
        return agent.run("File a bug in acme/web: login fails")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("variant", ["bm25", "regex"])
def test_the_server_searches_and_the_found_tool_runs(
    tmp_path: Path, stream: bool, variant: str
) -> None:
    filed.clear()
    query = "create an issue in github" if variant == "bm25" else "github_create_.*"
    arguments = {"repo": "acme/web", "title": "Login fails"}
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(responder=searching(query, arguments, answer="Filed.")) as server:
        result = run(server, trace, stream=stream, tool_search=variant)
    assert result.stop_reason is StopReason.FINAL_ANSWER, result.error
    assert filed == [("acme/web", "Login fails")]
    first, second = (r.json for r in server.requests)
    names = [t["name"] for t in first["tools"]]
    assert names[-1] == f"tool_search_tool_{variant}" and "search_tools" not in names
    assert first["tools"][-1]["type"] == f"tool_search_tool_{variant}_20251119"
    deferred = {t["name"] for t in first["tools"] if t.get("defer_loading")}
    assert deferred == {t.name for t in TOOLS if t.defer}
    assert second["tools"] == first["tools"]  # the cached prefix survives the search
    echoed = [b["type"] for b in second["messages"][1]["content"]]
    assert echoed == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    events = read_journal(trace)
    searches = [e for e in events if e["type"] == "tool_search"]
    assert len(searches) == 1 and searches[0]["by"] == "provider"
    assert searches[0]["queries"] == [query]
    assert searches[0]["revealed"][0] == "github_create_issue"
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_search") < kinds.index("tool_start")


def test_a_deferred_tool_the_server_did_not_load_is_refused(tmp_path: Path) -> None:
    filed.clear()
    call = tool_use("github_create_issue", {"repo": "a/b", "title": "t"})
    with FakeAnthropicServer([message(content=[call]), message("gave up")]) as server:
        result = run(server, tmp_path / "run.jsonl")
    assert filed == []
    refused = next(m for m in result.history if m.role == "tool")
    assert "deferred and was not found by a search yet" in refused.content


def test_a_search_error_is_journaled_and_reveals_nothing(tmp_path: Path) -> None:
    blocks = search_blocks("(", [])
    blocks[1]["content"] = {"type": "tool_search_tool_result_error", "error_code": "unavailable"}
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer([message("no tool", content=blocks)]) as server:
        run(server, trace)
    search = next(e for e in read_journal(trace) if e["type"] == "tool_search")
    assert search["error"] == "unavailable" and search["revealed"] == []


def test_without_a_provider_search_the_harness_searches() -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "clock", "arguments": {}}]}, {"content": "ok"}])
    agent = Agent(model, TOOLS, tool_search="native", limits=LIMITS)
    agent.run("x")
    names = [spec.name for spec in model.requests[0].tools]
    assert names == ["clock", "search_tools", "call_tool"]
    assert model.requests[0].deferred == frozenset()
    with pytest.raises(ValueError, match="tool_search"):
        Agent(model, TOOLS, tool_search="server")  # type: ignore[arg-type]
    native_box = Toolbox(TOOLS, tool_search="native")
    with pytest.raises(ValueError, match="lacks"):
        Agent(model, native_box)  # ScriptedModel has no search of its own
    with pytest.raises(ValueError, match="give it the search"):
        Agent(AnthropicModel(model="m"), Toolbox(TOOLS), tool_search="native")
    assert Agent(AnthropicModel(model="m"), native_box).toolbox is native_box


def test_the_fake_refuses_what_the_api_refuses() -> None:
    deferred = {"name": "alpha", "input_schema": {}, "defer_loading": True}
    body: dict[str, Any] = {"tools": [deferred], "messages": []}
    assert "At least one tool must be non-deferred" in str(tool_search_problem(body))
    body["tools"].append(
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    )
    assert tool_search_problem(body) is None
    body["messages"] = [{"role": "assistant", "content": search_blocks("x", ["nope"])}]
    assert tool_search_problem(body) == "Tool reference 'nope' has no corresponding tool definition"
    assert server_search({"tools": [deferred, body["tools"][1]]}, "alpha") == ["alpha"]


def test_a_turn_keeps_its_searches_through_the_journal() -> None:
    turn = ModelTurn(tool_searches=(ServerToolSearch(query="q", found=("a", "b")),))
    again = ModelTurn.from_dict(json.loads(json.dumps(turn.to_dict())))
    assert again.tool_searches == turn.tool_searches
    assert "tool_searches" not in ModelTurn(text="x").to_dict()


def test_the_real_sdk_reads_the_fakes_search_blocks() -> None:
    anthropic = pytest.importorskip("anthropic")
    tools = [
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
        {
            "name": "github_create_issue",
            "description": "Create an issue",
            "input_schema": {"type": "object", "properties": {"repo": {"type": "string"}}},
            "defer_loading": True,
        },
    ]
    with FakeAnthropicServer(responder=searching("create issue", {"repo": "a/b"})) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=0)
        reply = client.messages.create(
            model="claude-test",
            max_tokens=100,
            tools=tools,
            messages=[{"role": "user", "content": "file it"}],
        )
    kinds = [type(block).__name__ for block in reply.content]
    assert kinds == ["ServerToolUseBlock", "ToolSearchToolResultBlock", "ToolUseBlock"]
    result = reply.content[1]
    assert [r.tool_name for r in result.content.tool_references] == ["github_create_issue"]
