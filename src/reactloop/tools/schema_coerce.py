"""Arguments that carry no types, given the types their JSON Schema says.

Some calls arrive with every scalar written as a string: Qwen3-Coder's XML form
(``<parameter=height>5.5</parameter>``, recovered by ``models.openai.hermes``) has no way to
say ``5.5`` is a number. A tool made from a Python signature converts such strings (pydantic's
lax mode); ``coerce_by_schema`` does the same for a tool described by a JSON Schema (every MCP
tool), so both kinds take the same calls:

* a string where the schema allows ``integer``, ``number``, ``boolean``, ``null``, ``object``
  or ``array`` (and not ``string``) becomes that value when it reads as one (``"5"`` → ``5``,
  ``"5.5"`` → ``5.5``, ``"true"`` → ``True``, ``"null"`` → ``None``, ``'{"a": 1}'`` → a dict);
  otherwise it stays the string, and the check says what is wrong;
* ``null`` (or ``"null"``) for a property whose ``default`` is ``null`` and whose schema does
  not allow ``null`` is the property left out (the tool then uses its default).

``schemacheck.checked_arguments`` applies it only to arguments the schema refuses as they
are, so a call the schema accepts reaches the tool exactly as written. The walk follows
``properties``, ``additionalProperties``, ``items``, ``prefixItems`` and the branches of
``allOf``/``anyOf``/``oneOf``; it is bounded by the value's depth (decoded JSON, at most
``json_decode.MAX_DEPTH`` levels) and never raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from reactloop.support import json_decode

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.0*)?")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_BOOLEANS = {"true": True, "false": False}
_BRANCHES = ("allOf", "anyOf", "oneOf")
_MISSING = object()


def coerce_by_schema(value: Any, schema: Any) -> Any:
    """``value`` with its untyped strings read as the types ``schema`` asks for."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, str):
        return _coerce_string(value, _types(schema))
    if isinstance(value, dict):
        return _coerce_object(value, schema)
    if isinstance(value, list):
        return _coerce_array(value, schema)
    return value


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``schema`` and the schemas of its ``allOf``/``anyOf``/``oneOf`` branches, nested."""
    pending = [schema]
    while pending:
        current = pending.pop()
        yield current
        for keyword in _BRANCHES:
            branches = current.get(keyword)
            if isinstance(branches, list):
                pending.extend(b for b in reversed(branches) if isinstance(b, dict))


def _types(schema: dict[str, Any]) -> set[str]:
    """The types a value may have under ``schema``; every type when it names none."""
    named: set[str] = set()
    for part in _subschemas(schema):
        kind = part.get("type")
        named.update([kind] if isinstance(kind, str) else kind if isinstance(kind, list) else [])
        if "const" in part or "enum" in part:
            values = [part["const"]] if "const" in part else part.get("enum") or []
            named.update(_type_of(v) for v in values if isinstance(values, list))
    return named or {"string", "integer", "number", "boolean", "null", "object", "array"}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "string"


def _coerce_string(text: str, types: set[str]) -> Any:
    if "string" in types:
        return text
    stripped = text.strip()
    if "integer" in types and _INTEGER.fullmatch(stripped):
        return int(stripped.split(".")[0])
    if "number" in types and _NUMBER.fullmatch(stripped):
        number = float(stripped)
        if math.isfinite(number):
            return int(stripped) if stripped.lstrip("-").isdigit() else number
    if "boolean" in types and stripped.lower() in _BOOLEANS:
        return _BOOLEANS[stripped.lower()]
    if "null" in types and stripped == "null":
        return None
    if types & {"object", "array"} and stripped[:1] in ("{", "["):
        return _decoded(text, types)
    return text


def _decoded(text: str, types: set[str]) -> Any:
    """``text`` decoded when it is JSON of an allowed container type, else ``text`` as it was."""
    try:
        value = json_decode.safe_loads(text.strip())
    except json_decode.JSONRefused:
        return text
    wanted = tuple(kind for name, kind in (("object", dict), ("array", list)) if name in types)
    return value if isinstance(value, wanted) else text


def _property_schema(schema: dict[str, Any], name: str) -> Any:
    """The schema of property ``name``: the first ``properties`` entry among the branches, else
    ``additionalProperties`` when it is a schema; ``_MISSING`` when none says."""
    for part in _subschemas(schema):
        properties = part.get("properties")
        if isinstance(properties, dict) and name in properties:
            return properties[name]
    for part in _subschemas(schema):
        extra = part.get("additionalProperties")
        if isinstance(extra, dict):
            return extra
    return _MISSING


def _coerce_object(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, item in value.items():
        sub = _property_schema(schema, name)
        if sub is _MISSING:
            result[name] = item
        elif _is_null(item) and _null_means_default(sub):
            continue  # null for a parameter whose default is null: the parameter left out
        else:
            result[name] = coerce_by_schema(item, sub)
    return result


def _is_null(value: Any) -> bool:
    """``null``, or ``"null"`` as an untyped call writes it."""
    return value is None or (isinstance(value, str) and value.strip() == "null")


def _null_means_default(schema: Any) -> bool:
    if not isinstance(schema, dict) or "default" not in schema or schema["default"] is not None:
        return False
    return "null" not in _types(schema)


def _coerce_array(value: list[Any], schema: dict[str, Any]) -> list[Any]:
    prefix: list[Any] = []
    items: Any = None
    for part in _subschemas(schema):
        if not prefix and isinstance(part.get("prefixItems"), list):
            prefix = part["prefixItems"]
        if items is None and isinstance(part.get("items"), dict):
            items = part["items"]
    return [
        coerce_by_schema(item, prefix[index] if index < len(prefix) else items)
        for index, item in enumerate(value)
    ]


__all__ = ["coerce_by_schema"]
