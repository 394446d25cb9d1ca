"""``$ref``s inlined exactly: siblings kept beside the target, anchors, percent-encoded
pointers, ``$id`` bases; and a root's provider form never forbids what the tool needs."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reactloop.models.schemas.dialects import dialect_schema, inline_schema

jsonschema = pytest.importorskip("jsonschema")


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(value))


def test_a_ref_s_siblings_do_not_replace_its_target_s_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/small", "minimum": 0}},
        "$defs": {"small": {"type": "integer", "maximum": 10, "minimum": 5}},
    }
    exact, _ = inline_schema(schema)
    assert not _valid(exact, {"n": 3})  # the target's minimum 5 still holds
    assert not _valid(exact, {"n": 11}) and _valid(exact, {"n": 7})


def test_an_anchor_reference_is_its_anchor_not_the_root() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#count"}},
        "$defs": {"c": {"$anchor": "count", "type": "integer"}},
    }
    exact, _ = inline_schema(schema)
    assert exact["properties"]["n"] == {"type": "integer"}


def test_a_percent_encoded_pointer_is_decoded() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/a%20b~1c"}},
        "$defs": {"a b/c": {"type": "integer"}},
    }
    exact, _ = inline_schema(schema)
    assert exact["properties"]["n"] == {"type": "integer"}


def test_a_ref_resolves_against_the_id_of_the_schema_it_is_in() -> None:
    schema = {
        "$id": "urn:example:root",
        "type": "object",
        "properties": {"n": {"$ref": "urn:example:inner#/$defs/n"}},
        "$defs": {"inner": {"$id": "urn:example:inner", "$defs": {"n": {"type": "integer"}}}},
    }
    exact, _ = inline_schema(schema)
    assert not _valid(exact, {"n": "x"}) and _valid(exact, {"n": 1})


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {"kind": {"type": "string"}},
            "if": {"properties": {"kind": {"const": "file"}}},
            "then": {"properties": {"path": {"type": "string"}}},
            "else": {"properties": {"url": {"type": "string"}}},
            "unevaluatedProperties": False,
        },
        {
            "type": "object",
            "allOf": [
                {
                    "if": {"required": ["path"]},
                    "then": {"properties": {"path": {"type": "string"}}},
                },
                {"properties": {"url": {"type": "string"}}},
            ],
            "unevaluatedProperties": False,
        },
    ],
)
def test_the_anthropic_form_of_a_root_keeps_the_properties_the_tool_needs(
    schema: dict[str, Any],
) -> None:
    exact, _ = inline_schema(schema)
    arguments = {"kind": "file", "path": "a"} if "if" in schema else {"path": "a", "url": "b"}
    assert _valid(exact, arguments)
    for dialect in ("anthropic", "openai"):
        assert _valid(dialect_schema(exact, dialect), arguments), dialect


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3), st.booleans())
def test_any_key_path_written_as_a_pointer_resolves_to_its_schema(
    keys: list[str], percent: bool
) -> None:
    target: dict[str, Any] = {"type": "integer", "description": "the target"}
    defs: dict[str, Any] = target
    for key in reversed(keys):
        defs = {key: defs}
    assume(percent or not any("%" in key for key in keys))  # a "%" in a fragment is "%25"
    escaped = [key.replace("~", "~0").replace("/", "~1") for key in keys]
    if percent:
        escaped = [quote(part, safe="") for part in escaped]
    schema = {"type": "object", "properties": {"n": {"$ref": "#/$defs/" + "/".join(escaped)}}}
    schema["$defs"] = defs
    exact, _ = inline_schema(schema)
    assert exact["properties"]["n"] == {"type": "integer", "description": "the target"}
