"""Subschemas merged into their parent, for providers that refuse them where they are: ``allOf``
(every branch holds) anywhere, and at a root also ``anyOf``/``oneOf`` (some branch holds).

A merge only loosens: the merged schema allows everything the original allowed (a property
that two branches describe keeps the first description; a branch's ``additionalProperties``
is left out; alternatives require only what all of them require; ``if``/``then``/``else`` at a
root add the properties of ``then`` and ``else``, required by neither). ``unevaluatedProperties``
and ``unevaluatedItems`` beside merged subschemas go: they count what the subschemas evaluated,
which the merged form no longer says (kept, they would refuse properties the tool needs).
Arguments are still checked against the exact schema, so nothing the server would refuse gets
through.
"""

from __future__ import annotations

from typing import Any

ROOT_REFUSED = ("anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else")
_ALTERNATIVES = ("anyOf", "oneOf")
_NOT_MERGED = {"additionalProperties", "unevaluatedProperties", "title", "$comment"}
_UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
_CONDITIONAL = ("then", "else")


def merge_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with the branches of its ``allOf`` merged into it."""
    out = {key: value for key, value in node.items() if key not in ("allOf", *_UNEVALUATED)}
    for branch in node["allOf"]:
        if isinstance(branch, dict):
            _merge(out, branch, required=True)
    return out


def merge_root(node: dict[str, Any]) -> dict[str, Any]:
    """An object schema without the combinators a root may not have, their branches merged."""
    out = _without_applicators(node)
    all_of = node.get("allOf")
    for branch in all_of if isinstance(all_of, list) else []:
        if isinstance(branch, dict):
            _merge(out, merge_root(branch), required=True)
    for key in _ALTERNATIVES:
        branches = node.get(key)
        if not isinstance(branches, list) or not branches:
            continue
        merged = [merge_root(b) if isinstance(b, dict) else {} for b in branches]
        for branch in merged:
            _merge(out, {"properties": branch.get("properties", {})}, required=False)
        common = set.intersection(*(set(_required(b)) for b in merged))
        if common:
            out["required"] = _union(_required(out), sorted(common))
        given = set(_required(out))
        _describe_choice(out, [[r for r in _required(b) if r not in given] for b in merged])
    return out


def _without_applicators(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` without what a root may not have, with the properties ``then`` and ``else``
    name (required by neither), and without ``unevaluated*`` when it loses a subschema."""
    out = {key: value for key, value in node.items() if key not in ROOT_REFUSED}
    if any(key in node for key in ROOT_REFUSED):
        for key in _UNEVALUATED:
            out.pop(key, None)
    for key in _CONDITIONAL:
        branch = node.get(key)
        if isinstance(branch, dict):
            _merge(out, {"properties": merge_root(branch).get("properties", {})}, required=False)
    return out


def _describe_choice(out: dict[str, Any], choices: list[list[str]]) -> None:
    """Say in the description what the merged alternatives required (the model cannot see it
    in the schema any more): "Give one of: id; path"."""
    shown = list(dict.fromkeys(", ".join(c) for c in choices if c))
    if len(shown) < 2:
        return
    note = f"Give one of: {'; '.join(shown)}."
    description = out.get("description")
    out["description"] = f"{description} {note}" if isinstance(description, str) else note


def _merge(out: dict[str, Any], branch: dict[str, Any], *, required: bool) -> None:
    for key, value in branch.items():
        if key == "properties" and isinstance(value, dict):
            properties = dict(out.get("properties") or {})
            for name, sub in value.items():
                properties.setdefault(name, sub)
            out["properties"] = properties
        elif key == "required":
            if required and isinstance(value, list):
                out["required"] = _union(_required(out), value)
        elif key not in out and key not in _NOT_MERGED:
            out[key] = value


def _required(node: dict[str, Any]) -> list[str]:
    value = node.get("required")
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _union(first: list[str], second: list[Any]) -> list[str]:
    return list(dict.fromkeys([*first, *(v for v in second if isinstance(v, str))]))
