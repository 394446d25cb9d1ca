"""``Tool.from_schema``: a tool from a name, a description, a JSON Schema and a callable, whose
arguments are checked against the schema before the call; the MCP wrapper is made with it."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from reactloop import (
    Agent,
    Limits,
    MissingDependency,
    ModelTurn,
    PreparedCall,
    ScriptedModel,
    Tool,
    Toolbox,
    ToolCall,
    tool,
)
from reactloop.tools.mcp.schematool import SchemaTool, schema_tool

FORECAST = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def forecast_tool(seen: list[dict[str, Any]]) -> Tool:
    def forecast(**arguments: Any) -> str:
        seen.append(arguments)
        return f"sunny in {arguments['city']}"

    return Tool.from_schema("forecast", "The weather to come.", FORECAST, forecast)


def call(arguments: Any, name: str = "forecast", call_id: str = "1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))


def test_the_schema_is_what_the_model_is_told_and_valid_arguments_reach_the_function() -> None:
    seen: list[dict[str, Any]] = []
    tool = forecast_tool(seen)
    assert tool.spec.name == "forecast" and tool.spec.description == "The weather to come."
    assert tool.spec.parameters == FORECAST
    result = Toolbox([tool]).execute(call({"city": "Oslo", "days": 3}))
    assert result.ok and result.output == "sunny in Oslo"
    assert seen == [{"city": "Oslo", "days": 3}]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"days": 3}, "invalid arguments: arguments: 'city' is a required property"),
        (
            {"city": "Oslo", "days": 9},
            "invalid arguments: days: 9 is greater than the maximum of 7",
        ),
        (
            {"city": "Oslo", "days": "3 days"},
            "invalid arguments: days: '3 days' is not of type 'integer'",
        ),
        ({"city": ""}, "invalid arguments: city: '' should be non-empty"),
        (
            {"city": "Oslo", "hours": 2},
            "invalid arguments: arguments: Additional properties are not allowed "
            "('hours' was unexpected)",
        ),
    ],
)
def test_arguments_that_break_the_schema_never_reach_the_function(
    arguments: dict[str, Any], error: str
) -> None:
    seen: list[dict[str, Any]] = []
    result = Toolbox([forecast_tool(seen)]).execute(call(arguments))
    assert not result.ok and result.error == error
    assert seen == []


def test_an_async_function_runs_in_an_agent_and_the_approver_sees_the_checked_arguments() -> None:
    asked: list[PreparedCall] = []

    async def book(**arguments: Any) -> str:
        return f"booked {arguments['seats']} seats"

    schema = {"type": "object", "properties": {"seats": {"type": "integer"}}}
    booking = Tool.from_schema("book", "Book seats.", schema, book)
    assert booking.is_async and not booking.read_only

    def approve(prepared: PreparedCall, tool: Tool) -> bool:
        asked.append(prepared)
        return True

    model = ScriptedModel(
        [
            ModelTurn(tool_calls=(call({"seats": "two"}, "book", "a"),)),
            ModelTurn(tool_calls=(call({"seats": 2}, "book", "b"),)),
            "done",
        ]
    )
    result = Agent(model, [booking], approve=approve, limits=Limits(max_seconds=None)).run("go")
    assert result.answer == "done"
    contents = [m.content for m in result.history if m.role == "tool"]
    assert json.loads(contents[0]) == {
        "ok": False,
        "error": "invalid arguments: seats: 'two' is not of type 'integer'",
    }
    assert json.loads(contents[1]) == {"ok": True, "output": "booked 2 seats"}
    assert [p.arguments for p in asked] == [{"seats": 2}]  # a call that cannot run: not asked


def test_a_schema_that_is_not_json_schema_is_refused_unless_not_strict() -> None:
    broken = {"type": "object", "properties": {"x": {"type": 5}}}
    with pytest.raises(ValueError, match="not a valid JSON Schema: 5 is not valid"):
        Tool.from_schema("odd", "Odd.", broken, str)
    lenient = Tool.from_schema("odd", "Odd.", broken, lambda **kw: "ok", strict=False)
    assert lenient.spec.parameters == broken
    assert Toolbox([lenient]).execute(call({"x": [1]}, "odd")).output == "ok"  # not checked


def test_a_schema_must_be_a_dict() -> None:
    with pytest.raises(TypeError, match="the schema must be a dict, not list"):
        Tool.from_schema("odd", "Odd.", [], str)  # type: ignore[arg-type]


def test_without_jsonschema_a_strict_tool_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # ``import jsonschema`` now fails
    with pytest.raises(MissingDependency, match=r"pip install 'reactloop\[schema\]'"):
        Tool.from_schema("forecast", "The weather.", FORECAST, str)
    unchecked = Tool.from_schema("forecast", "The weather.", FORECAST, str, strict=False)
    assert unchecked.validate({"days": 99}) == {"days": 99}


def test_the_mcp_wrapper_is_a_tool_made_from_its_schema() -> None:
    seen: list[dict[str, Any]] = []
    wrapped = schema_tool(
        "forecast", "The weather.", FORECAST, lambda **kw: seen.append(kw) or "ok"
    )
    assert isinstance(wrapped, SchemaTool) and isinstance(wrapped, Tool)
    assert wrapped.schema == FORECAST and wrapped.spec.parameters == FORECAST
    same = SchemaTool.from_schema("forecast", "The weather.", FORECAST, str, strict=False)
    assert type(same) is SchemaTool
    box = Toolbox([wrapped])
    assert box.execute(call({"city": "Oslo"})).ok
    refused = box.execute(call({"city": 3}))
    assert refused.error == "invalid arguments: city: 3 is not of type 'string'"
    assert seen == [{"city": "Oslo"}]


def test_a_decorated_tool_still_validates_with_its_signature() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert add.schema is None
    assert add.parameters["required"] == ["a", "b"]
    assert (
        Toolbox([add]).execute(call({"a": 2, "b": "3"}, "add")).output == 5
    )  # pydantic's coercion
