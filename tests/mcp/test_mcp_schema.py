"""MCP input schemas normalised for the providers, checked against the schema errors recorded
in ``tests/wire_formats``: each checker below refuses what the provider refused, in its words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Toolbox, ToolCall
from reactloop.tools.mcp import normalize_schema, schema_tool

WIRE = Path(__file__).parent.parent / "wire_formats"


def recorded(name: str) -> str:
    body = json.loads((WIRE / name).read_text())["body"]
    return str(body["error"]["message"])


def openai_refusal(name: str, schema: dict[str, Any]) -> str | None:
    """OpenAI's check: every object schema needs ``properties``."""
    for path, node in walk(schema, ()):
        if node.get("type") == "object" and "properties" not in node:
            where = f"In context={path}, object schema missing properties."
            return f"Invalid schema for function '{name}': {where}"
    return None


def deepseek_refusal(name: str, schema: dict[str, Any]) -> str | None:
    """DeepSeek's check: the root must be ``type: "object"``."""
    kind = schema.get("type")
    if kind != "object":
        return (
            f"Invalid schema for function '{name}': schema must be a JSON Schema of "
            f"'type: \"object\"', got 'type: \"{kind}\"'."
        )
    return None


def anthropic_refusal(index: int, schema: dict[str, Any]) -> str | None:
    """Anthropic's check: the schema must be valid draft 2020-12."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return (
            f"tools.{index}.custom.input_schema: JSON schema is invalid. "
            "It must match JSON Schema draft 2020-12"
        )
    return None


SCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas"}
SCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}
SCHEMA_ONE = {"items", "not", "additionalProperties", "if", "then", "else", "contains"}


def walk(node: Any, path: tuple[str, ...]) -> Any:
    """Every (sub)schema of ``node``, with the keywords that lead to it."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key, value in node.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            for item in value.values():
                yield from walk(item, (*path, key))
        elif key in SCHEMA_LISTS and isinstance(value, list):
            for item in value:
                yield from walk(item, (*path, key))
        elif key in SCHEMA_ONE:
            yield from walk(value, (*path, key))


def test_an_object_without_properties_gets_them() -> None:
    raw = {"type": "object"}  # what many MCP servers send for a tool without arguments
    assert openai_refusal("list_databases", raw) == recorded("error_openai_400_tool_schema.json")
    nested = {"type": "object", "properties": {"filter": {"type": "object"}}}
    assert openai_refusal("list_databases", normalize_schema(raw)[0]) is None
    fixed, _ = normalize_schema(nested)
    assert openai_refusal("list_databases", fixed) is None
    assert fixed["properties"]["filter"] == {"type": "object", "properties": {}}


def test_a_root_that_is_not_an_object_is_wrapped() -> None:
    raw = {"type": "string", "description": "the address"}
    assert deepseek_refusal("send_email", raw) == recorded("error_deepseek_400_tool_schema.json")
    fixed, wrapped = normalize_schema(raw)
    assert wrapped and deepseek_refusal("send_email", fixed) is None
    assert fixed == {
        "type": "object",
        "properties": {"value": {"type": "string", "description": "the address"}},
        "required": ["value"],
    }


DRAFT_04 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "definitions": {"point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
    "properties": {
        "at": {"$ref": "#/definitions/point", "description": "where"},
        "radius": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
    },
}


def test_a_draft_04_schema_becomes_draft_2020_12() -> None:
    assert anthropic_refusal(4, DRAFT_04) == recorded("error_anthropic_400_tool_schema.json")
    for dialect in ("anthropic", "openai"):
        fixed, _ = normalize_schema(DRAFT_04, dialect)
        assert anthropic_refusal(4, fixed) is None
        assert fixed["properties"]["at"] == {
            "type": "array",
            "items": {"anyOf": [{"type": "number"}, {"type": "number"}]},
            "description": "where",
        }
        assert fixed["properties"]["radius"] == {"type": "number", "exclusiveMinimum": 0}
        assert "$schema" not in fixed and "definitions" not in fixed


def test_one_of_is_kept_for_anthropic_and_becomes_any_of_for_openai() -> None:
    raw = {
        "type": "object",
        "properties": {"id": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    assert "oneOf" in normalize_schema(raw, "anthropic")[0]["properties"]["id"]
    assert normalize_schema(raw, "openai")[0]["properties"]["id"] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}]
    }


def test_format_titles_and_schema_keys_go_but_properties_with_those_names_stay() -> None:
    raw = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {
            "format": {"type": "string", "format": "date-time", "title": "Format"},
            "title": {"type": "string"},
        },
        "required": ["format"],
    }
    assert normalize_schema(raw)[0] == {
        "type": "object",
        "properties": {"format": {"type": "string"}, "title": {"type": "string"}},
        "required": ["format"],
    }


def test_refs_are_inlined_and_a_recursive_one_is_cut() -> None:
    raw = {
        "type": "object",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/node"}, "label": {"type": "string"}},
            }
        },
        "properties": {"tree": {"$ref": "#/$defs/node"}, "other": {"$ref": "https://x/y.json"}},
    }
    fixed, _ = normalize_schema(raw)
    text = json.dumps(fixed)
    assert "$ref" not in text and "$defs" not in text
    depth, node = 0, fixed["properties"]["tree"]
    while "properties" in node and "child" in node["properties"]:
        node, depth = node["properties"]["child"], depth + 1
    assert depth == 3 and node == {}  # three levels, then "any value"
    assert fixed["properties"]["other"] == {}


def test_a_wrapped_argument_is_validated_against_the_inner_schema() -> None:
    seen: list[dict[str, Any]] = []
    schema, _ = normalize_schema({"anyOf": [{"type": "object", "required": ["a"]}]})
    tool = schema_tool("pick", "Pick one.", schema, lambda **kw: seen.append(kw) or "ok")
    box = Toolbox([tool])
    assert box.execute(ToolCall(id="1", name="pick", arguments='{"value": {"a": 1}}')).ok
    refused = box.execute(ToolCall(id="2", name="pick", arguments='{"value": {"b": 1}}'))
    assert refused.error == "invalid arguments: value: 'a' is a required property"
    assert seen == [{"value": {"a": 1}}]


def test_a_schema_that_is_not_json_schema_does_not_stop_the_call() -> None:
    tool = schema_tool("odd", "Odd.", {"type": "object", "properties": {"x": {"type": 5}}}, str)
    assert tool.validate({"x": 1}) == {"x": 1}


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown schema dialect 'gemini'"):
        normalize_schema({}, "gemini")


KEYWORDS = [
    "type",
    "properties",
    "$ref",
    "$defs",
    "items",
    "oneOf",
    "anyOf",
    "allOf",
    "required",
    "format",
    "title",
    "not",
    "additionalProperties",
    "a",
    "b",
    "exclusiveMinimum",
    "minimum",
    "enum",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["#", "#/$defs/a", "#/properties", "object", "string", "#/$defs/a/b/0"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(KEYWORDS),
            inner,
            max_size=5,
        )
    ),
    max_leaves=80,
)


def deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"x": node}}
    return node


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, st.integers(1, 3000).map(deep)), st.sampled_from(["openai", "anthropic"]))
def test_any_json_normalises_to_an_object_schema_without_refs(schema: Any, dialect: str) -> None:
    fixed, wrapped = normalize_schema(schema, dialect)
    assert fixed["type"] == "object" and isinstance(fixed["properties"], dict)
    assert wrapped == (set(fixed["properties"]) == {"value"} and fixed.get("required") == ["value"])
    for _, node in walk(fixed, ()):
        assert isinstance(node.get("$ref"), str) is False
        assert "$defs" not in node and "$schema" not in node
        if node.get("type") == "object":
            assert isinstance(node["properties"], dict)
        assert isinstance(node.get("type", ""), str | list)
        if dialect == "openai":
            assert "oneOf" not in node
    json.dumps(fixed)  # nothing left that JSON cannot carry
