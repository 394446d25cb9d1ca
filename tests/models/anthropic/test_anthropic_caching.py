"""Prompt caching (``cache=True``): breakpoints on the wire, and zero hits explained once."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from helpers import add
from reactloop import Agent, Event
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.anthropic.caching import cache_notice, minimum_cacheable
from reactloop.testing.anthropic_replies import message, tool_use
from reactloop.testing.fake_anthropic import FakeAnthropicServer

EPHEMERAL = {"type": "ephemeral"}


def cached_run(script: list[Any]) -> tuple[list[Event], list[dict[str, Any]], list[Any]]:
    """The run's events, the requests the server got, and the requests as journaled."""
    entries: list[Event] = []
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel(model="claude-sonnet-4-6", base_url=server.base_url, cache=True)
        Agent(model, [add], instructions="Be brief.", observers=[entries.append]).run("2+3?")
    requests = [r.json for r in server.requests]
    journaled = [e.data["request"] for e in entries if e.type == "response"]
    return entries, requests, journaled


def cache_warnings(events: list[Event]) -> list[str]:
    return [
        e.data["message"]
        for e in events
        if e.type == "warning" and e.data["kind"] == "cache_too_short"
    ]


def test_breakpoints_on_tools_system_and_the_last_message_of_each_step() -> None:
    script = [message(content=[tool_use("add", {"a": 2, "b": 3})]), message("5")]
    _, (first, second), journaled = cached_run(script)
    for body in (first, second):
        assert body["tools"][-1]["cache_control"] == EPHEMERAL
        assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]
        assert body["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
        marks = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
        assert len(marks) == 1  # the API allows four breakpoints: tools, system, last message
    assert second["messages"][0]["content"] == [{"type": "text", "text": "2+3?"}]
    assert all(entry["cache_breakpoints"] is True for entry in journaled)
    assert "new_messages" in journaled[1]  # the journal stays linear


def test_zero_cache_hits_on_a_short_prompt_are_a_run_warning_once() -> None:
    short = {"input_tokens": 300, "output_tokens": 5}
    script = [
        message(content=[tool_use("add", {"a": 2, "b": 3})], usage=short),
        message("5", usage={**short, "input_tokens": 340}),
    ]
    events, _, _ = cached_run(script)
    (warning,) = cache_warnings(events)  # two short replies, one warning
    assert "300 tokens" in warning and "at least 1024 tokens" in warning


def test_each_run_of_one_model_warns_again() -> None:
    short = {"input_tokens": 300, "output_tokens": 5}
    events: list[Event] = []
    with FakeAnthropicServer([message("5", usage=short), message("6", usage=short)]) as server:
        model = AnthropicModel(model="claude-sonnet-4-6", base_url=server.base_url, cache=True)
        agent = Agent(model, [add], observers=[events.append])
        agent.run("2+3?")
        agent.run("2+4?")
    assert len(cache_warnings(events)) == 2


def test_no_notice_when_the_cache_works_or_the_prompt_is_long_enough() -> None:
    written = {"input_tokens": 5, "cache_creation_input_tokens": 2000, "output_tokens": 1}
    events, _, _ = cached_run([message("5", usage=written)])
    assert cache_warnings(events) == []
    assert not any(e.type == "warning" for e in events)
    assert cache_notice("claude-sonnet-4-6", 0, 0, 5000) is None


@pytest.mark.parametrize(
    ("model", "tokens"),
    [
        ("claude-sonnet-4-6", 1024),
        ("claude-opus-4-5-20251101", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-3-5-haiku-latest", 2048),
        ("some-local-model", 1024),
    ],
)
def test_minimum_cacheable_length_per_model(model: str, tokens: int) -> None:
    assert minimum_cacheable(model) == tokens


def unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def test_what_one_step_cached_is_the_unchanged_prefix_of_the_next() -> None:
    script = [
        message(content=[tool_use("add", {"a": 2, "b": 3})]),
        message(content=[tool_use("add", {"a": 5, "b": 5})]),
        message("10"),
    ]
    _, requests, _ = cached_run(script)
    for before, after in itertools.pairwise(requests):
        assert unmarked(after["messages"][: len(before["messages"])]) == unmarked(
            before["messages"]
        )
        assert after["system"] == before["system"] and after["tools"] == before["tools"]
