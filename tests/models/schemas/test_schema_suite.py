"""The exact form of a schema agrees with the JSON-Schema-Test-Suite (draft 2020-12), and each
provider's form is only ever looser than it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop.models.schemas.dialects import (
    DIALECTS,
    WRAPPED_KEY,
    dialect_schema,
    inline_schema,
)
from reactloop.tools.schemacheck import schema_checker

jsonschema = pytest.importorskip("jsonschema")

SUITE = Path(__file__).parent / "json_schema_test_suite" / "draft2020-12"
FILES = sorted(path.name for path in SUITE.glob("*.json"))

# Groups the argument check does not support, and why; for these the exact form may only be
# looser than the suite (it accepts every valid case). docs/mcp.md lists them.
UNSUPPORTED = {
    ("ref.json", "remote ref, containing refs itself"): "a remote $ref (the meta-schema)",
    ("defs.json", "validate definition against metaschema"): "a remote $ref (the meta-schema)",
    ("pattern.json", "pattern with Unicode property escape requires unicode mode"): "\\p{…}",
    ("patternProperties.json", "patternProperties with Unicode property escape"): "\\p{…}",
    ("unevaluatedItems.json", "unevaluatedItems with $dynamicRef"): "$dynamicRef",
    ("unevaluatedProperties.json", "unevaluatedProperties with $dynamicRef"): "$dynamicRef",
}


def _groups(name: str) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = json.loads((SUITE / name).read_text(encoding="utf-8"))
    return groups


def _accepts(exact: dict[str, Any], wrapped: bool, data: Any) -> bool:
    """Whether the argument check of an MCP tool with this exact form accepts ``data``."""
    checker = schema_checker(exact, strict=False)
    if checker is None:  # not valid JSON Schema here: the server alone checks
        return True
    return bool(checker.is_valid({WRAPPED_KEY: data} if wrapped else data))


def test_the_suite_is_here() -> None:
    assert {"ref.json", "anchor.json", "defs.json", "unevaluatedProperties.json"} <= set(FILES)
    assert sum(len(group["tests"]) for name in FILES for group in _groups(name)) >= 795


@pytest.mark.parametrize("name", FILES)
def test_the_exact_form_agrees_with_the_suite(name: str) -> None:
    disagreements = []
    for group in _groups(name):
        exact, wrapped = inline_schema(group["schema"])
        unsupported = (name, group["description"]) in UNSUPPORTED
        for case in group["tests"]:
            accepted = _accepts(exact, wrapped, case["data"])
            if accepted != case["valid"] and not (unsupported and accepted):
                disagreements.append(f"{group['description']} / {case['description']}")
    assert disagreements == []


@pytest.mark.parametrize("name", FILES)
def test_every_provider_s_form_is_only_looser_than_the_exact_form(name: str) -> None:
    stricter = []
    for group in _groups(name):
        exact, wrapped = inline_schema(group["schema"])
        if schema_checker(exact, strict=False) is None:
            continue
        exact_check = jsonschema.Draft202012Validator(exact)
        for dialect in DIALECTS:
            form = jsonschema.Draft202012Validator(dialect_schema(exact, dialect))
            for case in group["tests"]:
                arguments = {WRAPPED_KEY: case["data"]} if wrapped else case["data"]
                if not isinstance(arguments, dict):
                    continue  # a model's arguments are always an object
                if exact_check.is_valid(arguments) and not form.is_valid(arguments):
                    stricter.append(f"{dialect}: {group['description']} / {case['description']}")
    assert stricter == []
