"""MCP input schemas made acceptable to each provider's tool-schema checks.

What the recorded errors in ``tests/wire_formats`` say is refused: an object schema without
``properties`` (OpenAI), a root that is not ``type: "object"`` (DeepSeek), a schema that is not
valid JSON Schema draft 2020-12 (Anthropic: draft-04 boolean ``exclusiveMinimum``, array-form
``items``). Strict modes also refuse ``$ref``, ``$schema`` and ``format``. So, for every
dialect: local ``$ref``s are inlined (a recursive one, after ``MAX_REF_DEPTH`` levels, becomes
"any value"), ``$defs``/``definitions``/``$schema``/``$id``/``format``/titles dropped, objects
get ``properties``, and a root that is not an object is wrapped as ``{"value": …}``
(``WRAPPED_KEY``; the caller unwraps it). ``oneOf`` is kept for ``anthropic`` and becomes
``anyOf`` for ``openai`` (the portable default, which every provider accepts).
"""

from __future__ import annotations

from typing import Any

WRAPPED_KEY = "value"
MAX_REF_DEPTH = 3
MAX_DEPTH = 64
DIALECTS = ("openai", "anthropic")
_DROPPED = {"$schema", "$id", "$defs", "definitions", "$comment", "format", "$anchor"}
_SCHEMA_MAPS = {"properties", "patternProperties", "dependentSchemas"}
_SCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}
_SCHEMA_ONE = {
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


def normalize_schema(schema: Any, dialect: str = "openai") -> tuple[dict[str, Any], bool]:
    """The schema for ``dialect`` and whether its root was wrapped into ``{"value": …}``."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown schema dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    root = schema if isinstance(schema, dict) else {}
    walker = _Walker(root, dialect)
    node = walker.node(root, 0, 0)
    if not isinstance(node, dict):
        node = {}
    if _is_object_root(node):
        node["type"] = "object"
        node.setdefault("properties", {})
        return node, False
    wrapped = {"type": "object", "properties": {WRAPPED_KEY: node}, "required": [WRAPPED_KEY]}
    return wrapped, True


def _is_object_root(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "object":
        return True
    # "{}" or bare properties: an object of any (or of those) keys
    return kind is None and not any(k in node for k in ("anyOf", "oneOf", "allOf", "enum", "const"))


class _Walker:
    def __init__(self, root: dict[str, Any], dialect: str) -> None:
        self.root = root
        self.dialect = dialect

    def node(self, value: Any, depth: int, refs: int) -> Any:
        """One schema (a dict or a boolean) normalised."""
        if not isinstance(value, dict):
            return value if isinstance(value, bool) else {}
        if depth > MAX_DEPTH:
            return {}
        if isinstance(value.get("$ref"), str):
            return self._inline(value, depth, refs)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if (
                key in _DROPPED
                or (key == "title" and isinstance(item, str))
                or _malformed(key, item)
            ):
                continue
            out_key = "anyOf" if key == "oneOf" and self.dialect == "openai" else key
            out[out_key] = self._keyword(key, item, depth, refs)
        self._fix_draft4(out)
        if out.get("type") == "object" or (out.get("type") is None and "required" in out):
            out.setdefault("properties", {})
        return out

    def _keyword(self, key: str, item: Any, depth: int, refs: int) -> Any:
        if key in _SCHEMA_MAPS and isinstance(item, dict):
            return {name: self.node(sub, depth + 1, refs) for name, sub in item.items()}
        if key in _SCHEMA_LISTS and isinstance(item, list):
            return [self.node(sub, depth + 1, refs) for sub in item]
        if key == "items" and isinstance(item, list):
            return self._tuple_items(item, depth, refs)
        if key in _SCHEMA_ONE:
            return self.node(item, depth + 1, refs)
        return item

    def _tuple_items(self, items: list[Any], depth: int, refs: int) -> Any:
        subs = [self.node(sub, depth + 1, refs) for sub in items]
        return {"anyOf": subs} if subs else {}

    def _inline(self, value: dict[str, Any], depth: int, refs: int) -> Any:
        target = _resolve(self.root, value["$ref"]) if refs < MAX_REF_DEPTH else None
        if target is None:
            fallback = {"description": value["description"]} if "description" in value else {}
            return fallback
        merged = {k: v for k, v in value.items() if k != "$ref"}
        inlined = self.node(target, depth + 1, refs + 1)
        if not isinstance(inlined, dict):
            return inlined
        rest = self.node(merged, depth + 1, refs) if merged else {}
        return {**inlined, **rest}

    @staticmethod
    def _fix_draft4(out: dict[str, Any]) -> None:
        for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            flag = out.get(exclusive)
            if isinstance(flag, bool):
                del out[exclusive]
                if flag and bound in out:
                    out[exclusive] = out.pop(bound)


def _malformed(key: str, item: Any) -> bool:
    """A keyword whose value no JSON Schema allows: left out rather than sent on."""
    if key == "type":
        return not (isinstance(item, str) or (isinstance(item, list) and _strings(item)))
    if key == "required":
        return not (isinstance(item, list) and _strings(item))
    if key in _SCHEMA_MAPS:
        return not isinstance(item, dict)
    if key in _SCHEMA_LISTS or key == "enum":
        return not isinstance(item, list)
    return False


def _strings(items: list[Any]) -> bool:
    return all(isinstance(item, str) for item in items)


def _resolve(root: dict[str, Any], ref: str) -> Any:
    """The target of a local JSON pointer ``#/…`` in ``root``; None for any other ref."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
