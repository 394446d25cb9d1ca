"""Untyped arguments (Qwen3-Coder's XML calls) reach a schema tool with the schema's types."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.messages import ToolCall
from reactloop.models.openai.hermes import extract_tool_calls
from reactloop.tools.base import Tool
from reactloop.tools.prepared import prepare
from reactloop.tools.schema_coerce import coerce_by_schema

jsonschema = pytest.importorskip("jsonschema")


def _tool(properties: dict[str, Any], **extra: Any) -> Tool:
    schema = {"type": "object", "properties": properties, **extra}
    return Tool.from_schema("f", "test", schema, lambda **kw: kw)


def _xml(arguments: dict[str, Any]) -> str:
    parts = []
    for name, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        parts.append(f"<parameter={name}>\n{text}\n</parameter>")
    return "<tool_call>\n<function=f>\n" + "\n".join(parts) + "\n</function>\n</tool_call>"


def _prepared_values(tool: Tool, content: str) -> dict[str, Any] | None:
    _, calls = extract_tool_calls(content)
    assert len(calls) == 1
    call = ToolCall(id="c", name=calls[0][0], arguments=calls[0][1])
    prepared = prepare(call, tool, "unknown")
    assert prepared.error is None, prepared.error
    return prepared.values


def test_the_issue_s_call_reaches_the_tool_as_a_number() -> None:
    tool = _tool({"height": {"type": "number"}, "count": {"type": "integer"}})
    content = (
        "<function=f><parameter=height>5.5</parameter><parameter=count>3</parameter></function>"
    )
    assert _prepared_values(tool, content) == {"height": 5.5, "count": 3}


SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "integer": st.integers(min_value=-(10**30), max_value=10**30),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "string": st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=20),
    "array": st.lists(st.integers(), max_size=4),
    "object": st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=3),
}


@st.composite
def typed_arguments(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    kinds = draw(st.lists(st.sampled_from(sorted(SCALARS)), min_size=1, max_size=5))
    properties = {f"p{i}": {"type": kind} for i, kind in enumerate(kinds)}
    arguments = {f"p{i}": draw(SCALARS[kind]) for i, kind in enumerate(kinds)}
    return properties, arguments


@settings(max_examples=150, deadline=None)
@given(typed_arguments())
def test_every_typed_value_written_as_xml_reaches_the_tool_with_its_type(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    properties, arguments = case
    # a string that is all spaces, or one with a newline at its edge, is not kept by the XML form
    strings = [v for v in arguments.values() if isinstance(v, str)]
    if any(s != s.strip() or not s for s in strings):
        return
    values = _prepared_values(_tool(properties), _xml(arguments))
    assert values is not None
    for name, expected in arguments.items():
        got = values[name]
        if isinstance(expected, float):
            assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=0.0) or got == expected
        else:
            assert got == expected and type(got) is type(expected), (name, got, expected)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.text(max_size=12), st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{1,3})?", fullmatch=True)),
    st.sampled_from(sorted(SCALARS)),
)
def test_a_string_becomes_a_value_of_the_type_or_stays_as_it_is(text: str, kind: str) -> None:
    got = coerce_by_schema(text, {"type": kind})
    if kind == "string":
        assert got == text
    elif got != text or not isinstance(got, str):
        assert jsonschema.Draft202012Validator({"type": kind}).is_valid(got)
        assert json.loads(json.dumps(got)) == got


def test_a_string_is_kept_where_the_schema_allows_a_string() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert coerce_by_schema("5", schema) == "5"
    assert coerce_by_schema("5", {"type": ["integer", "null"]}) == 5
    assert coerce_by_schema("five", {"type": "integer"}) == "five"
    assert coerce_by_schema("1e999", {"type": "number"}) == "1e999"
    assert coerce_by_schema("[1]", {"type": "object"}) == "[1]"


def test_nested_values_follow_items_prefix_items_and_branches() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"size": {"type": "array", "items": {"type": "integer"}}}}],
        "properties": {"pair": {"prefixItems": [{"type": "boolean"}, {"type": "number"}]}},
        "additionalProperties": {"type": "integer"},
    }
    value = {"size": ["1", "2"], "pair": ["true", "0.5"], "other": "7"}
    assert coerce_by_schema(value, schema) == {"size": [1, 2], "pair": [True, 0.5], "other": 7}


def test_a_call_the_schema_refuses_either_way_keeps_the_first_error() -> None:
    tool = _tool({"n": {"type": "integer"}}, required=["n"])
    prepared = prepare(ToolCall(id="c", name="f", arguments='{"n": "x"}'), tool, "unknown")
    assert prepared.error == "invalid arguments: n: 'x' is not of type 'integer'"


def test_a_call_the_schema_accepts_is_not_converted() -> None:
    tool = _tool({"n": {"type": ["string", "integer"]}})
    prepared = prepare(ToolCall(id="c", name="f", arguments='{"n": "5"}'), tool, "unknown")
    assert prepared.values == {"n": "5"}


def test_null_for_a_parameter_whose_default_is_null_is_the_parameter_left_out() -> None:
    tool = _tool({"n": {"type": "integer", "default": None}, "m": {"type": "integer"}})
    prepared = prepare(ToolCall(id="c", name="f", arguments='{"n": null, "m": 1}'), tool, "u")
    assert prepared.error is None
    assert prepared.values == {"m": 1}
    refused = prepare(ToolCall(id="c", name="f", arguments='{"m": null}'), tool, "u")
    assert refused.error == "invalid arguments: m: None is not of type 'integer'"
