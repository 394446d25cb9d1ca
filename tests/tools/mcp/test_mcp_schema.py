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
from reactloop.models.schemas.dialects import dialect_schema, inline_schema, normalize_schema
from reactloop.tools.mcp.schematool import schema_tool

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"


def recorded(name: str) -> str:
    body = json.loads((WIRE / name).read_text())["body"]
    return str(body["error"]["message"])


OPENAI_ROOT = (
    "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the "
    "top level."
)  # reported in google-calendar-mcp#39, langchainjs#9804 (not recorded here)
# reported in claude-code#5319, #5973, mobile-mcp#344 (not recorded here)
ANTHROPIC_ROOT = "input_schema does not support oneOf, allOf, or anyOf at the top level"


def openai_refusal(name: str, schema: dict[str, Any]) -> str | None:
    """OpenAI's checks: an object root without combinators; every object schema needs
    ``properties``, every array ``items``; no ``allOf`` (notion-mcp-server#102)."""
    if schema.get("type") != "object" or any(k in schema for k in ROOT_REFUSED):
        return f"Invalid schema for function '{name}': {OPENAI_ROOT}"
    for path, node in walk(schema, ()):
        where = f"Invalid schema for function '{name}': In context={path}"
        if node.get("type") == "object" and "properties" not in node:
            return f"{where}, object schema missing properties."
        if node.get("type") == "array" and "items" not in node and "prefixItems" not in node:
            return f"{where}, array schema missing items."
        if "allOf" in node:
            return f"{where}, 'allOf' is not permitted."
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
    """Anthropic's checks: valid draft 2020-12, an object root without combinators."""
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return (
            f"tools.{index}.custom.input_schema: JSON schema is invalid. "
            "It must match JSON Schema draft 2020-12"
        )
    if any(k in schema for k in ("oneOf", "anyOf", "allOf")):
        return f"tools.{index}.custom.input_schema: {ANTHROPIC_ROOT}"
    return None


ROOT_REFUSED = ("oneOf", "anyOf", "allOf", "enum", "not")
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
    exact, _ = inline_schema(DRAFT_04)
    assert exact["properties"]["at"] == {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "number"}],
        "description": "where",
    }
    for dialect in ("anthropic", "openai"):
        fixed, _ = normalize_schema(DRAFT_04, dialect)
        assert anthropic_refusal(4, fixed) is None
        assert fixed["properties"]["radius"] == {"type": "number", "exclusiveMinimum": 0}
        assert "$schema" not in fixed and "definitions" not in fixed
    anthropic = normalize_schema(DRAFT_04, "anthropic")[0]
    assert anthropic["properties"]["at"] == exact["properties"]["at"]
    assert normalize_schema(DRAFT_04, "openai")[0]["properties"]["at"] == {
        "type": "array",
        "items": {"anyOf": [{"type": "number"}, {"type": "number"}]},
        "description": "where",
    }


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
    raw = {"anyOf": [{"type": "object", "required": ["a"]}, {"type": "string"}]}
    exact, wrapped = inline_schema(raw)
    assert wrapped and exact == {
        "type": "object",
        "properties": {"value": raw},
        "required": ["value"],
    }
    tool = schema_tool("pick", "Pick one.", exact, lambda **kw: seen.append(kw) or "ok")
    box = Toolbox([tool])
    assert box.execute(ToolCall(id="1", name="pick", arguments='{"value": {"a": 1}}')).ok
    assert box.execute(ToolCall(id="2", name="pick", arguments='{"value": "text"}')).ok
    refused = box.execute(ToolCall(id="3", name="pick", arguments='{"value": {"b": 1}}'))
    assert refused.error is not None and refused.error.startswith("invalid arguments: value:")
    assert seen == [{"value": {"a": 1}}, {"value": "text"}]


def test_alternatives_at_the_root_are_merged_into_one_object() -> None:
    raw = {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "oneOf": [
            {"required": ["id"]},
            {"properties": {"path": {"type": "string"}}, "required": ["path", "mode"]},
        ],
        "allOf": [{"properties": {"mode": {"enum": ["r", "w"]}}, "required": ["mode"]}],
    }
    for dialect in ("openai", "anthropic"):
        fixed, wrapped = normalize_schema(raw, dialect)
        assert not wrapped and fixed == {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "mode": {"enum": ["r", "w"]},
                "path": {"type": "string"},
            },
            "required": ["mode"],  # allOf's, and what every alternative requires (nothing)
            "description": "Give one of: id; path.",
        }
    exact, _ = inline_schema(raw)
    assert exact["oneOf"] == raw["oneOf"] and exact["allOf"] == raw["allOf"]  # checked as sent


def test_all_of_is_kept_for_anthropic_and_merged_for_openai() -> None:
    raw = {
        "type": "object",
        "properties": {
            "data": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "integer"}}, "additionalProperties": False},
                ]
            }
        },
    }
    assert normalize_schema(raw, "anthropic")[0]["properties"]["data"] == raw["properties"]["data"]
    assert normalize_schema(raw, "openai")[0]["properties"]["data"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }


def test_formats_anthropic_knows_are_kept_for_it() -> None:
    raw = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "ref": {"type": "string", "format": "uri-reference"},
        },
    }
    anthropic = normalize_schema(raw, "anthropic")[0]["properties"]
    assert anthropic == {
        "when": {"type": "string", "format": "date-time"},
        "ref": {"type": "string"},
    }
    assert normalize_schema(raw, "openai")[0]["properties"]["when"] == {"type": "string"}


def test_an_array_without_items_gets_them() -> None:
    raw = {"type": "object", "properties": {"tags": {"type": "array"}}}
    assert normalize_schema(raw)[0]["properties"]["tags"] == {"type": "array", "items": {}}


def test_a_ref_used_twice_is_inlined_twice_and_a_deep_chain_is_not_cut() -> None:
    defs = {f"d{i}": {"type": "object", "properties": {"next": {"$ref": f"#/$defs/d{i + 1}"}}}
            for i in range(6)}  # fmt: skip
    defs["d6"] = {"type": "string"}
    raw = {"type": "object", "$defs": defs, "properties": {
        "a": {"$ref": "#/$defs/d0"}, "b": {"$ref": "#/$defs/d0"}}}  # fmt: skip
    fixed, _ = normalize_schema(raw)
    node = fixed["properties"]["b"]
    for _ in range(6):
        node = node["properties"]["next"]
    assert node == {"type": "string"} and fixed["properties"]["a"] == fixed["properties"]["b"]


def test_a_ref_that_doubles_at_every_level_stops_growing() -> None:
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
            for i in range(40)}  # fmt: skip
    defs["d40"] = {"type": "string"}
    fixed, _ = normalize_schema({"type": "object", "$defs": defs,
                                 "properties": {"x": {"$ref": "#/$defs/d0"}}})  # fmt: skip
    assert len(json.dumps(fixed)) < 5_000_000  # 2**40 copies otherwise


def test_schema_for_renders_each_dialect_once_per_schema() -> None:
    from reactloop import ToolSpec
    from reactloop.models.schemas.dialects import schema_for

    raw = {"type": "object", "properties": {"id": {"oneOf": [{"type": "string"}, {}]}}}
    exact, _ = inline_schema(raw)
    spec = ToolSpec(name="t", description="d", parameters={"type": "object"}, raw_parameters=exact)
    first = schema_for(spec, "anthropic")
    assert first is schema_for(spec, "anthropic")
    assert first["properties"]["id"] == {"oneOf": [{"type": "string"}, {}]}
    assert schema_for(spec, "openai")["properties"]["id"] == {"anyOf": [{"type": "string"}, {}]}
    plain = ToolSpec(name="p", description="d", parameters={"type": "object", "properties": {}})
    assert schema_for(plain, "anthropic") is plain.parameters


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
    "prefixItems",
    "const",
]
REFS = ["#", "#/$defs/a", "#/$defs/b", "#/properties", "#/$defs/a/b/0", "#/properties/a"]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from([*REFS, "object", "string", "array", "date-time"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYWORDS), inner, max_size=5)
    ),
    max_leaves=80,
)


def deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"x": node}}
    return node


def cyclic(names: list[str]) -> dict[str, Any]:
    """$defs that refer to each other in a ring (a -> b -> ... -> a), and to the root."""
    ring = {
        name: {"type": "object", "properties": {
            "next": {"$ref": f"#/$defs/{names[(i + 1) % len(names)]}"},
            "root": {"$ref": "#"}, "again": {"anyOf": [{"$ref": f"#/$defs/{name}"}]}}}
        for i, name in enumerate(names)
    }  # fmt: skip
    return {
        "type": "object",
        "$defs": ring,
        "properties": {"start": {"$ref": f"#/$defs/{names[0]}"}},
    }


def huge_enum(size: int) -> dict[str, Any]:
    return {"oneOf": [{"enum": list(range(size))}, {"type": "object"}], "$defs": {"e": {"enum": [
        f"v{i}" for i in range(size)]}}, "properties": {"e": {"$ref": "#/$defs/e"}}}  # fmt: skip


RINGS = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True)
SCHEMAS = st.one_of(
    JSON, st.integers(1, 3000).map(deep), RINGS.map(cyclic), st.integers(0, 100_000).map(huge_enum)
)
# json.dumps, which checks that nothing was changed, goes only so deep
SHALLOWER = st.one_of(
    JSON, st.integers(1, 400).map(deep), RINGS.map(cyclic), st.integers(0, 100_000).map(huge_enum)
)


@settings(max_examples=150, deadline=None)
@given(SCHEMAS, st.sampled_from(["openai", "anthropic"]))
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


@settings(max_examples=60, deadline=None)
@given(SHALLOWER)
def test_every_provider_accepts_every_form_and_the_exact_one_can_check_arguments(
    schema: Any,
) -> None:
    before = json.dumps(schema)
    exact, wrapped = inline_schema(schema)
    assert json.dumps(schema) == before  # the server's schema is left as it was
    jsonschema.Draft202012Validator.check_schema(exact)  # arguments can always be checked
    openai, anthropic = dialect_schema(exact, "openai"), dialect_schema(exact, "anthropic")
    assert (openai, wrapped) == normalize_schema(schema, "openai")
    assert anthropic == normalize_schema(schema, "anthropic")[0]
    assert openai_refusal("t", openai) is None
    assert deepseek_refusal("t", openai) is None
    assert anthropic_refusal(0, anthropic) is None
