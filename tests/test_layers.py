"""Each module belongs to a declared layer and imports only from its own layer or below: the
package reads from the bottom up (docs/architecture.md draws the same layers).

Every import counts here: at module level, inside a function (a deferred import is still a
dependency), and by an ``importlib`` string (a registry line, a lazy name's home).
"""

from __future__ import annotations

import pytest

from import_graph import ALL_IMPORTS, MODULES

# Lowest first. A module's layer is that of the longest prefix listed.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("errors", ("reactloop.errors", "reactloop._version")),
    ("support", ("reactloop.support",)),
    ("vocabulary", ("reactloop.messages", "reactloop.limits", "reactloop.result",
                    "reactloop.history")),
    ("parts", ("reactloop.tools", "reactloop.models", "reactloop.journal", "reactloop.sandbox",
               "reactloop.output")),
    ("loop", ("reactloop.loop",)),
    ("agent", ("reactloop.agent", "reactloop.agent_setup", "reactloop.agent_runs",
               "reactloop.approval", "reactloop.resume", "reactloop.subagents",
               "reactloop.subagent_reach", "reactloop.subagent_resume")),
    ("features", ("reactloop.conversation", "reactloop.replay", "reactloop.usage",
                  "reactloop.viewer", "reactloop.testing")),
    ("entry points", ("reactloop", "reactloop.__main__", "reactloop.cli", "reactloop.eval")),
]  # fmt: skip
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    best, layer = -1, ""
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), name
    return layer


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if not layer_of(m)] == []


def upward_imports() -> list[str]:
    found = []
    for imp in ALL_IMPORTS:
        low, high = layer_of(imp.importer), layer_of(imp.target)
        if RANK[high] > RANK[low]:
            how = "by name" if imp.by_name else f"in {imp.function}()" if imp.function else ""
            found.append(f"{imp.importer} ({low}) imports {imp.target} ({high}) {how}".strip())
    return found


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert upward_imports() == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("reactloop.loop.run_loop", "loop"),
        ("reactloop.tools.mcp.client", "parts"),
        ("reactloop", "entry points"),
        ("reactloop.support.json_decode", "support"),
    ],
)
def test_a_module_takes_the_layer_of_its_longest_prefix(module: str, layer: str) -> None:
    assert layer_of(module) == layer
