"""The Responses API's hosted ``tool_search`` (``Agent(tool_search="native")``): deferred
function tools sent with ``defer_loading``, the server's ``tool_search_call`` and
``tool_search_output`` items read into the turn (journaled, revealing what they loaded) and
echoed in the next request; the item shapes are the ``openai`` SDK's own types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, StopReason, tool
from reactloop.journal.writer import read_journal
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.models.responses.reply import server_searches
from reactloop.testing import FakeResponsesServer, function_call, response

LIMITS = Limits(max_model_calls=6, max_tool_calls=6, max_seconds=60)
converted: list[float] = []


@tool(defer=True)
def units_celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature in degrees Celsius to Fahrenheit."""
    converted.append(celsius)
    return celsius * 9 / 5 + 32


@tool(defer=True)
def units_miles_to_km(miles: float) -> float:
    """Convert a distance in miles to kilometres."""
    return miles * 1.609344


@tool
def clock() -> str:
    """The time now."""
    return "09:00"


SEARCH_CALL = {
    "type": "tool_search_call",
    "id": "tsc_1",
    "call_id": "ts_1",
    "arguments": {"query": "convert celsius"},
    "execution": "server",
    "status": "completed",
}


def search_output(names: list[str]) -> dict[str, Any]:
    loaded = [
        {"type": "function", "name": n, "parameters": {"type": "object"}, "strict": False}
        for n in names
    ]
    return {
        "type": "tool_search_output",
        "id": "tso_1",
        "call_id": "ts_1",
        "execution": "server",
        "status": "completed",
        "tools": loaded,
    }


def searched_reply(names: list[str]) -> dict[str, Any]:
    body = response(calls=[function_call("units_celsius_to_fahrenheit", {"celsius": 100})])
    body["output"][:0] = [SEARCH_CALL, search_output(names)]
    return body


@pytest.mark.parametrize("stream", [False, True])
def test_the_hosted_search_loads_a_tool_that_then_runs(tmp_path: Path, stream: bool) -> None:
    converted.clear()
    trace = tmp_path / "run.jsonl"
    replies = [searched_reply(["units_celsius_to_fahrenheit"]), response("212")]
    with FakeResponsesServer(replies) as server, Journal(trace) as journal:
        model = OpenAIResponsesModel(
            model="gpt-test", base_url=server.base_url, stream=stream, max_retries=0
        )
        tools = [clock, units_celsius_to_fahrenheit, units_miles_to_km]
        agent = Agent(model, tools, journal=journal, limits=LIMITS, tool_search="native")
        result = agent.run("100 C in F?")
    assert result.stop_reason is StopReason.FINAL_ANSWER, result.error
    assert converted == [100]
    first, second = (r.json for r in server.requests)
    assert first["tools"][-1] == {"type": "tool_search"}
    assert [t["name"] for t in first["tools"] if t.get("defer_loading")] == [
        "units_celsius_to_fahrenheit",
        "units_miles_to_km",
    ]
    assert second["tools"] == first["tools"]
    kinds = [item.get("type") for item in second["input"]]
    assert kinds[-4:] == [
        "tool_search_call",
        "tool_search_output",
        "function_call",
        "function_call_output",
    ]
    search = next(e for e in read_journal(trace) if e["type"] == "tool_search")
    assert search["by"] == "provider" and search["queries"] == ["convert celsius"]
    assert search["revealed"] == ["units_celsius_to_fahrenheit"]


def test_a_tool_the_search_did_not_load_is_refused(tmp_path: Path) -> None:
    converted.clear()
    with FakeResponsesServer([searched_reply(["units_miles_to_km"]), response("?")]) as server:
        model = OpenAIResponsesModel(model="gpt-test", base_url=server.base_url, max_retries=0)
        tools = [clock, units_celsius_to_fahrenheit, units_miles_to_km]
        result = Agent(model, tools, limits=LIMITS, tool_search="native").run("100 C in F?")
    assert converted == []
    refused = next(m for m in result.history if m.role == "tool")
    assert "not found by a search yet" in refused.content


def test_the_items_are_the_sdks_own_types() -> None:
    types = pytest.importorskip("openai.types.responses")
    types.ResponseToolSearchCall.model_validate(SEARCH_CALL)
    types.ResponseToolSearchOutputItem.model_validate(search_output(["a"]))
    namespace = {"type": "namespace", "name": "ns", "description": "", "tools": []}
    namespace["tools"] = [{"type": "function", "name": "b", "parameters": {}}]
    found = server_searches([SEARCH_CALL, {**search_output(["a"]), "tools": [namespace]}])
    assert [s.found for s in found] == [("b",)]
