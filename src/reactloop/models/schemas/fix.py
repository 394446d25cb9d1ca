"""Repairs of single keywords in MCP input schemas, for ``schema.py``: draft-04 keywords
rewritten, values no schema allows found, and what the draft 2020-12 meta-schema refuses
left out."""

from __future__ import annotations

from typing import Any

MAX_FIXES = 20
MAX_DEPTH = 64
SCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas"}
SCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}
SCHEMA_ONE = {  # the keywords whose value is one subschema
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
}


def drop_invalid(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without the keywords whose values draft 2020-12 does not allow (Anthropic:
    "JSON schema is invalid. It must match JSON Schema draft 2020-12"), found by checking it
    against the meta-schema with ``jsonschema`` (the ``mcp`` extra; without it, as it is)."""
    try:
        import jsonschema
    except ImportError:
        return schema
    meta: Any = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    for _ in range(MAX_FIXES):
        try:
            errors = list(meta.iter_errors(schema))
        except RecursionError:
            return schema
        if not errors or not any(_delete_at(schema, list(e.absolute_path)) for e in errors):
            return schema
    return schema


def _delete_at(schema: dict[str, Any], path: list[Any]) -> bool:
    """Delete the innermost keyword on ``path`` (a keyword of a schema object)."""
    node: Any = schema
    owner: dict[str, Any] | None = None
    key: Any = None
    for step in path:
        if isinstance(node, dict) and step in node:
            owner, key, node = node, step, node[step]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            break
    if owner is None:
        return False
    del owner[key]
    return True


def copied(value: Any, depth: int) -> Any:
    """A copy of a keyword's value (its containers), so that a fix never changes the caller's."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {key: copied(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [copied(v, depth + 1) if isinstance(v, dict | list) else v for v in value]
    return value


def fix_draft4(out: dict[str, Any]) -> None:
    """Draft-04's boolean ``exclusiveMinimum``/``exclusiveMaximum`` as draft 2020-12 numbers."""
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)


def malformed(key: str, item: Any) -> bool:
    """A keyword whose value no JSON Schema allows: left out rather than sent on."""
    if key == "type":
        return not (isinstance(item, str) or (isinstance(item, list) and _strings(item)))
    if key == "required":
        return not (isinstance(item, list) and _strings(item))
    if key in SCHEMA_MAPS:
        return not isinstance(item, dict)
    if key in SCHEMA_LISTS or key == "enum":
        return not isinstance(item, list)
    return False


def _strings(items: list[Any]) -> bool:
    return all(isinstance(item, str) for item in items)
