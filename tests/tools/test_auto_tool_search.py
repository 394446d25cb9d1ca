"""``tool_search="auto"``, the default: the provider's own search where the model's adapter
has one and the model supports it (``models/tool_search_support.py``), the harness's
``search_tools`` / ``call_tool`` everywhere else; against the fake Anthropic, Responses and
Chat Completions servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, tool
from reactloop.journal.writer import read_journal
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.local.model import LocalLlamaModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.models.tool_search_support import claude_has_tool_search, gpt_has_tool_search
from reactloop.replay.rerun import replay
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    FakeResponsesServer,
    anthropic_error,
    completion,
    message,
    response,
    responses_error,
    tool_call,
    tool_use,
)
from reactloop.testing.anthropic_tool_search import searching
from reactloop.tools.search import search_mode
from reactloop.tools.toolbox import Toolbox

LIMITS = Limits(max_model_calls=4, max_tool_calls=4, max_seconds=60)


@tool(defer=True, read_only=True)
def lookup(key: str) -> str:
    """Read a value from the user's notes by its key.

    Args:
        key: the name of the note
    """
    return {"price": "7"}[key]


@tool(read_only=True)
def clock() -> str:
    """The time now."""
    return "09:00"


def names(tools: list[dict[str, Any]]) -> list[Any]:
    return [t.get("name") for t in tools]


@pytest.mark.parametrize(
    ("model", "has"),
    [
        ("claude-sonnet-4-5", True),
        ("claude-sonnet-4-5-20250929", True),
        ("claude-haiku-4-5@20251001", True),
        ("anthropic.claude-opus-4-5-20251101-v1:0", True),
        ("claude-sonnet-4-6", True),
        ("claude-opus-5", True),
        ("claude-sonnet-4-20250514", False),
        ("claude-opus-4-1-20250805", False),
        ("claude-3-7-sonnet-20250219", False),
        ("claude-test", False),
    ],
)
def test_which_claude_has_tool_search(model: str, has: bool) -> None:
    assert claude_has_tool_search(model) is has


@pytest.mark.parametrize(
    ("model", "has"),
    [
        ("gpt-5.4", True),
        ("gpt-5.4-pro", True),
        ("gpt-5.5", True),
        ("gpt-6", True),
        ("gpt-5", False),
        ("gpt-5.1", False),
        ("gpt-4o", False),
        ("o3", False),
        ("gpt-test", False),
    ],
)
def test_which_gpt_has_tool_search(model: str, has: bool) -> None:
    assert gpt_has_tool_search(model) is has


@given(
    st.sampled_from(["opus", "sonnet", "haiku"]),
    st.integers(3, 12),
    st.integers(0, 9),
    st.sampled_from(["", "-20250929", "@20251001", "-v1:0"]),
)
def test_a_claude_name_is_read_by_its_version_not_its_date(
    family: str, major: int, minor: int, tail: str
) -> None:
    name = f"claude-{family}-{major}-{minor}{tail}"
    assert claude_has_tool_search(name) is ((major, minor) >= (4, 5))


def test_the_default_sends_a_supported_claude_the_providers_search(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    responder = searching("read a note by its key", {"key": "price"}, answer="7")
    with FakeAnthropicServer(responder=responder) as server:
        claude = AnthropicModel(model="claude-sonnet-4-5", base_url=server.base_url, max_retries=0)
        with Journal(trace) as journal:
            result = Agent(claude, [clock, lookup], journal=journal, limits=LIMITS).run("Tea?")
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.answer == "7", result.error
    first = server.requests[0].json
    assert names(first["tools"]) == ["clock", "lookup", "tool_search_tool_bm25"]
    assert "search_tools" not in names(first["tools"])
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert start["config"]["tool_search_used"] == {"mode": "native", "deferred": ["lookup"]}


def test_a_run_with_the_providers_search_replays_identically(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    responder = searching("read a note by its key", {"key": "price"}, answer="7")
    with FakeAnthropicServer(responder=responder) as server:
        claude = AnthropicModel(model="claude-sonnet-4-5", base_url=server.base_url, max_retries=0)
        with Journal(trace) as journal:
            Agent(claude, [clock, lookup], journal=journal, limits=LIMITS).run("Tea?")
    again = tmp_path / "again.jsonl"
    report = replay(trace, tools=[clock, lookup], journal=again)
    assert report.identical and report.result.answer == "7", report.divergence
    start = next(e for e in read_journal(again) if e["type"] == "run_start")
    assert start["config"]["tool_search_used"] == {"mode": "own", "deferred": ["lookup"]}


def test_a_search_record_in_the_config_given_is_not_recorded_as_the_runs(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    carried = {"tool_search_used": {"mode": "native", "deferred": ["lookup"]}}
    with Journal(trace) as journal:
        Agent(ScriptedModel(["Finish[9]"]), [clock], journal=journal, config=carried).run("q")
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert "tool_search_used" not in start["config"]


def test_the_default_gives_an_unsupported_claude_the_harnesss_pair() -> None:
    with FakeAnthropicServer([message(content=[tool_use("clock", {})]), message("9")]) as server:
        claude = AnthropicModel(model="claude-sonnet-4-20250514", base_url=server.base_url)
        result = Agent(claude, [clock, lookup], limits=LIMITS).run("Time?")
    assert result.answer == "9", result.error
    tools = server.requests[0].json["tools"]
    assert names(tools) == ["clock", "search_tools", "call_tool"]
    assert not any(t.get("defer_loading") for t in tools)


def test_native_forces_the_providers_search_on_an_unsupported_claude() -> None:
    with FakeAnthropicServer([message("9")]) as server:
        claude = AnthropicModel(model="claude-sonnet-4-20250514", base_url=server.base_url)
        Agent(claude, [clock, lookup], limits=LIMITS, tool_search="native").run("Time?")
    assert names(server.requests[0].json["tools"])[-1] == "tool_search_tool_bm25"


@pytest.mark.parametrize(("model", "hosted"), [("gpt-5.4", True), ("gpt-5", False)])
def test_the_default_on_the_responses_api(model: str, hosted: bool) -> None:
    with FakeResponsesServer([response("9")]) as server:
        gpt = OpenAIResponsesModel(model=model, base_url=server.base_url, max_retries=0)
        result = Agent(gpt, [clock, lookup], limits=LIMITS).run("Time?")
    assert result.answer == "9", result.error
    tools = server.requests[0].json["tools"]
    if hosted:
        assert names(tools) == ["clock", "lookup", None] and tools[-1] == {"type": "tool_search"}
    else:
        assert names(tools) == ["clock", "search_tools", "call_tool"]


def test_the_default_on_chat_completions_is_the_harnesss_pair() -> None:
    replies = [completion(tool_calls=[tool_call("clock", {})]), completion("9")]
    with FakeOpenAIServer(replies) as server:
        gpt = OpenAIChatModel(model="gpt-5.4", base_url=server.base_url, max_retries=0)
        result = Agent(gpt, [clock, lookup], limits=LIMITS).run("Time?")
    assert result.answer == "9", result.error
    sent = [t["function"]["name"] for t in server.requests[0].json["tools"]]
    assert sent == ["clock", "search_tools", "call_tool"]


def test_the_default_in_text_react_is_the_harnesss_pair() -> None:
    claude = AnthropicModel(model="claude-sonnet-4-5")
    agent = Agent(claude, [clock, lookup], protocol="text")
    assert [spec.name for spec in agent.toolbox.specs] == ["clock", "search_tools", "call_tool"]
    scripted = Agent(ScriptedModel(["Finish[9]"]), [clock, lookup])
    assert scripted.toolbox.search is not None and not scripted.toolbox.search.native


def test_the_embedded_model_has_no_search_of_its_own() -> None:
    local = object.__new__(LocalLlamaModel)  # its adapter, not a loaded model
    assert search_mode("auto", local, "native") == "own"
    assert search_mode("native", local, "native") == "own"


def test_a_toolbox_given_keeps_its_search_under_auto() -> None:
    box = Toolbox([clock, lookup])  # the harness's pair
    claude = AnthropicModel(model="claude-sonnet-4-5")
    assert Agent(claude, box).toolbox is box
    with pytest.raises(ValueError, match="give it the search"):
        Agent(claude, Toolbox([clock, lookup]), tool_search="native")


def test_an_unknown_search_is_refused() -> None:
    with pytest.raises(ValueError, match="auto, own or native"):
        Agent(ScriptedModel(["Finish[9]"]), [clock], tool_search="theirs")  # type: ignore[arg-type]


@pytest.mark.parametrize("search", ["auto", "theirs"])
def test_a_toolbox_takes_only_a_search_it_can_choose_alone(search: str) -> None:
    """``auto`` needs the model, which an ``Agent`` has and a ``Toolbox`` does not."""
    with pytest.raises(ValueError, match=r"'own' or 'native' \('auto' is chosen by an Agent"):
        Toolbox([clock, lookup], tool_search=search)


def test_a_refused_search_says_how_to_do_without_it() -> None:
    refusal = "tools.2: the model claude-3-5-haiku does not support tool_search_tool_bm25_20251119"
    with FakeAnthropicServer([anthropic_error(400, "invalid_request_error", refusal)]) as server:
        claude = AnthropicModel(model="claude-3-5-haiku", base_url=server.base_url)
        agent = Agent(claude, [clock, lookup], limits=LIMITS, tool_search="native")
        result = agent.run("Time?")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert refusal in str(result.error) and "(--tool-search own)" in str(result.error)
    with FakeResponsesServer([responses_error(400, "tool_search is not supported")]) as server:
        gpt = OpenAIResponsesModel(model="gpt-5", base_url=server.base_url, max_retries=0)
        result = Agent(gpt, [clock, lookup], limits=LIMITS, tool_search="native").run("Time?")
    assert "(--tool-search own)" in str(result.error)
    with FakeResponsesServer([responses_error(400, "unknown parameter: temperature")]) as server:
        gpt = OpenAIResponsesModel(model="gpt-5", base_url=server.base_url, max_retries=0)
        result = Agent(gpt, [clock, lookup], limits=LIMITS, tool_search="native").run("Time?")
    assert result.error and "--tool-search" not in str(result.error)
