"""MCP input schemas in the form each provider accepts, from one exact form.

``inline_schema`` makes the *exact* form: local ``$ref``s inlined (the same ref at most
``MAX_REF_DEPTH`` times on one path, and none past ``MAX_NODES`` subschemas: then "any value";
resolved by ``refs.RefIndex``; a ``$ref`` beside other keywords becomes an ``allOf`` branch),
draft-04 keywords rewritten as draft 2020-12 (boolean ``exclusiveMinimum``, array ``items``),
``$defs``/``$schema``/``$id``/titles and keywords with values no schema allows dropped, and a
root that is not an object wrapped as ``{"value": …}`` (``WRAPPED_KEY``; the caller unwraps).
Arguments are validated against it; it is what ``ToolSpec.raw_parameters`` carries.

``dialect_schema`` makes a provider's form from the exact one; a form may only be *looser* than
the exact schema (validation checks the rest), never stricter. In every dialect the root is a
plain object: ``anyOf``/``oneOf``/``allOf`` there are merged into it (Anthropic: "input_schema
does not support oneOf, allOf, or anyOf at the top level"; OpenAI: "schema must have type
'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"), and objects get
``properties``, arrays ``items`` (OpenAI: "object schema missing properties").

- ``anthropic`` keeps nested ``oneOf``/``anyOf``/``allOf`` and the string formats its strict
  mode knows (``ANTHROPIC_FORMATS``): any valid draft 2020-12 schema is accepted.
- ``openai`` (OpenAI and every OpenAI-compatible server) is flattened: ``oneOf`` becomes
  ``anyOf``, ``allOf`` is merged into its parent ("'allOf' is not permitted"), ``format`` and
  boolean subschemas go: none of the keywords OpenAI's strict mode refuses is left. (Its other
  rules, every property required and ``additionalProperties: false``, would change what a
  tool takes; reactloop does not ask for strict mode.)
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from reactloop.models.schemas.fix import (
    MAX_DEPTH,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SCHEMA_ONE,
    copied,
    drop_invalid,
    fix_draft4,
    malformed,
)
from reactloop.models.schemas.merge import merge_all_of, merge_root
from reactloop.models.schemas.refs import RefIndex

if TYPE_CHECKING:
    from reactloop.messages import ToolSpec

WRAPPED_KEY = "value"
MAX_REF_DEPTH = 3
MAX_NODES = 1_000
DIALECTS = ("openai", "anthropic")
ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_DROPPED = {
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$dynamicRef",
    "$vocabulary",
}
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_ANNOTATIONS = frozenset(
    {"description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)


def inline_schema(schema: Any) -> tuple[dict[str, Any], bool]:
    """The exact form of an MCP input schema and whether its root was wrapped."""
    root = schema if isinstance(schema, dict | bool) else {}
    node = _Inliner(root).node(root, 0, (), "")
    if node is True:
        node = {}
    if _object_like(node, top=True):
        return drop_invalid(node), False
    wrapped = {"type": "object", "properties": {WRAPPED_KEY: node}, "required": [WRAPPED_KEY]}
    return drop_invalid(wrapped), True


def dialect_schema(exact: dict[str, Any], dialect: str) -> dict[str, Any]:
    """A provider's form (``DIALECTS``) of an exact form made by ``inline_schema``."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown schema dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    node = _Dialect(dialect).node(exact, 0)
    root = merge_root(node if isinstance(node, dict) else {})
    root["type"] = "object"
    root.setdefault("properties", {})
    return root


def normalize_schema(schema: Any, dialect: str = "openai") -> tuple[dict[str, Any], bool]:
    """The schema for ``dialect`` and whether its root was wrapped into ``{"value": …}``."""
    exact, wrapped = inline_schema(schema)
    return dialect_schema(exact, dialect), wrapped


_CACHE: dict[tuple[int, str], tuple[dict[str, Any], dict[str, Any]]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 1024


def schema_for(spec: ToolSpec, dialect: str) -> dict[str, Any]:
    """What an adapter sends for a tool: ``dialect``'s form of its raw schema when it has one
    (an MCP tool's), else its ``parameters``. Computed once per schema and dialect."""
    raw = spec.raw_parameters
    if raw is None:
        return spec.parameters
    key = (id(raw), dialect)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
    if hit is not None and hit[0] is raw:
        return hit[1]
    made = dialect_schema(raw, dialect)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = (raw, made)  # holding raw keeps its id from being reused
    return made


def _object_like(node: Any, *, top: bool = False) -> bool:
    """Whether ``node`` describes objects only, so that it can be a root as it is."""
    if node is True:
        return True
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "object" or (top and _has_object(kind)):
        return True
    if kind is not None or "enum" in node or "const" in node:
        return False
    branches = [b for k in _COMBINATORS if isinstance(node.get(k), list) for b in node[k]]
    return all(_object_like(branch) for branch in branches)


def _has_object(kind: Any) -> bool:
    return isinstance(kind, list) and "object" in kind


class _Inliner:
    """Walks a raw schema into the exact form."""

    def __init__(self, root: Any) -> None:
        self.refs = RefIndex(root)
        self.nodes = 0

    def node(self, value: Any, depth: int, refs: tuple[str, ...], base: str) -> Any:
        if not isinstance(value, dict):
            return value if isinstance(value, bool) else {}
        self.nodes += 1
        if depth > MAX_DEPTH:
            return {}
        base = self.refs.base_of(value, base)
        if isinstance(value.get("$ref"), str):
            return self._inline(value, depth, refs, base)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _DROPPED or key == "$ref" or malformed(key, item):
                continue
            if key == "title" and isinstance(item, str):
                continue
            if key == "items" and isinstance(item, list):
                out["prefixItems"] = [self.node(sub, depth + 1, refs, base) for sub in item]
            elif key == "additionalItems" and isinstance(value.get("items"), list):
                out["items"] = self.node(item, depth + 1, refs, base)
            else:
                out[key] = self._keyword(key, item, depth, (refs, base))
        fix_draft4(out)
        return _unevaluated_dropped(out) if "$dynamicRef" in value else out

    def _keyword(self, key: str, item: Any, depth: int, where: tuple[tuple[str, ...], str]) -> Any:
        refs, base = where
        if key in SCHEMA_MAPS and isinstance(item, dict):
            return {name: self.node(sub, depth + 1, refs, base) for name, sub in item.items()}
        if key in SCHEMA_LISTS and isinstance(item, list):
            return [self.node(sub, depth + 1, refs, base) for sub in item]
        if key in SCHEMA_ONE:
            return self.node(item, depth + 1, refs, base)
        return copied(item, depth)  # its own, so that fixing it never changes the caller's

    def _inline(self, value: dict[str, Any], depth: int, refs: tuple[str, ...], base: str) -> Any:
        """A ``$ref`` and its sibling keywords: both hold (the target as an ``allOf`` branch,
        which is how 2020-12 applies a ``$ref``: in place, its annotations seen by
        ``unevaluated*`` beside it); siblings that only annotate are merged into the target."""
        rest = {k: v for k, v in value.items() if k != "$ref"}
        siblings = self.node(rest, depth, refs, base) if rest else {}
        target = None
        if self.nodes < MAX_NODES:
            target = self.refs.resolve(value["$ref"], base)
        if target is None or refs.count(target.uri) >= MAX_REF_DEPTH:
            return _unevaluated_dropped(siblings)  # remote, dangling or too deep: any value
        inlined = self.node(target.schema, depth + 1, (*refs, target.uri), target.base)
        if not siblings:
            return inlined
        if isinstance(inlined, dict) and _ANNOTATIONS.issuperset(siblings):
            return {**inlined, **siblings}
        branches = siblings.get("allOf")
        extra = branches if isinstance(branches, list) else []
        return {**siblings, "allOf": [inlined, *extra]}


def _unevaluated_dropped(node: Any) -> Any:
    """``node`` without ``unevaluatedProperties``/``unevaluatedItems``, which would refuse what
    an in-place reference left out beside them (remote, too deep, dynamic) evaluates."""
    if not isinstance(node, dict):
        return node
    return {k: v for k, v in node.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}


class _Dialect:
    """Walks an exact form into one provider's form."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.flat = dialect == "openai"

    def node(self, value: Any, depth: int) -> Any:
        if not isinstance(value, dict):
            return {} if self.flat or not isinstance(value, bool) else value
        if depth > MAX_DEPTH + 2:
            return {}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "format" and not self._keeps_format(item):
                continue
            out_key = "anyOf" if key == "oneOf" and self.flat else key
            if out_key in out:  # oneOf beside anyOf: the anyOf is kept (looser)
                continue
            out[out_key] = self._keyword(key, item, depth)
        if self.flat and isinstance(out.get("prefixItems"), list):
            _flatten_tuple(out)
        if self.flat and isinstance(out.get("allOf"), list):
            out = merge_all_of(out)
        _add_missing(out)
        return out

    def _keeps_format(self, item: Any) -> bool:
        return not self.flat and isinstance(item, str) and item in ANTHROPIC_FORMATS

    def _keyword(self, key: str, item: Any, depth: int) -> Any:
        if key in SCHEMA_MAPS and isinstance(item, dict):
            return {name: self.node(sub, depth + 1) for name, sub in item.items()}
        if key in SCHEMA_LISTS and isinstance(item, list):
            return [self.node(sub, depth + 1) for sub in item]
        if key in SCHEMA_ONE:
            return self.node(item, depth + 1)
        return item


def _flatten_tuple(out: dict[str, Any]) -> None:
    """``prefixItems`` (positions) as ``items: {"anyOf": …}`` (any of them, anywhere)."""
    subs = out.pop("prefixItems")
    extra = out.pop("items", None)
    if isinstance(extra, dict) and extra:
        subs = [*subs, extra]
    out["items"] = {"anyOf": subs} if subs else {}


def _add_missing(out: dict[str, Any]) -> None:
    kind = out.get("type")
    if kind == "object" or (kind is None and "required" in out):
        out.setdefault("properties", {})
    if kind == "array" and "prefixItems" not in out:
        out.setdefault("items", {})
