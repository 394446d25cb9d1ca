"""Tool search through the real adapters against the fake servers of the three native
protocols: the same two tools in every request body, and a deferred tool found, then run."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from reactloop import Agent, Limits, tool
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    FakeResponsesServer,
    completion,
    function_call,
    message,
    response,
    tool_call,
    tool_use,
)

SEARCH = {"queries": ["convert celsius to fahrenheit"]}
CALL = {"name": "units_celsius_to_fahrenheit", "arguments": {"celsius": 100}}


@tool(defer=True)
def units_celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature in degrees Celsius to Fahrenheit."""
    return celsius * 9 / 5 + 32


@tool(defer=True)
def units_miles_to_km(miles: float) -> float:
    """Convert a distance in miles to kilometres."""
    return miles * 1.609344


def _openai() -> tuple[Any, Callable[[Any], Any]]:
    replies = [
        completion(tool_calls=[tool_call("search_tools", SEARCH)]),
        completion(tool_calls=[tool_call("call_tool", CALL)]),
        completion("212"),
    ]
    server = FakeOpenAIServer(replies)
    return server, lambda s: OpenAIChatModel(model="m", base_url=s.base_url, max_retries=0)


def _anthropic() -> tuple[Any, Callable[[Any], Any]]:
    replies = [
        message(content=[tool_use("search_tools", SEARCH)]),
        message(content=[tool_use("call_tool", CALL)]),
        message("212"),
    ]
    server = FakeAnthropicServer(replies)
    return server, lambda s: AnthropicModel(model="m", base_url=s.base_url, max_retries=0)


def _responses() -> tuple[Any, Callable[[Any], Any]]:
    replies = [
        response(calls=[function_call("search_tools", SEARCH)]),
        response(calls=[function_call("call_tool", CALL)]),
        "212",
    ]
    server = FakeResponsesServer(replies)
    return server, lambda s: OpenAIResponsesModel(model="m", base_url=s.base_url, max_retries=0)


@pytest.mark.parametrize("make", [_openai, _anthropic, _responses])
def test_a_deferred_tool_is_found_and_run_and_the_tools_never_change(
    make: Callable[[], tuple[Any, Callable[[Any], Any]]],
) -> None:
    server, model_for = make()
    with server:
        tools = [units_celsius_to_fahrenheit, units_miles_to_km]
        result = Agent(model_for(server), tools, limits=Limits(max_model_calls=5)).run("100 C?")
        bodies = [r.json for r in server.requests]
    assert result.answer == "212", result.error
    outputs = [json.loads(str(m.content)) for m in result.history if m.role == "tool"]
    assert outputs[0]["output"]["tools"][0]["name"] == "units_celsius_to_fahrenheit"
    assert outputs[1] == {"ok": True, "output": 212.0}
    sent = [json.dumps(body["tools"], sort_keys=True) for body in bodies]
    assert len(bodies) == 3 and len(set(sent)) == 1  # one tools array, byte for byte
    assert "units_miles_to_km" not in sent[0] and "search_tools" in sent[0]
