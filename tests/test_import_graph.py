"""The package's import graph (read by tests/import_graph.py): ``import reactloop`` stays light,
no module imports itself in a circle — also through the registries' ``importlib`` strings —
and no import hides inside a function to dodge a circle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from import_graph import (
    ALL_IMPORTS,
    MODULES,
    SRC,
    Import,
    imports_of,
    module_graph,
    path_between,
    strongly_connected,
)

# Third-party packages behind optional extras (adapters, evaluation): ``import reactloop`` must
# not load them.
OPTIONAL_SDKS = ("openai", "anthropic", "xllamacpp", "mcp", "httpx", "httpcore", "llm", "ray")
# Function-level imports of our own modules that are allowed: lazy imports of a module that
# loads an optional dependency (one of OPTIONAL_SDKS), so that ``import reactloop`` does not.
# (importing module, imported module) -> why. Each entry is checked to still be true.
LAZY_OPTIONAL: dict[tuple[str, str], str] = {}
# Function-level imports deferred for start-up time: ``import reactloop`` (for ``@tool``, the
# types, an ``Agent`` to configure) does not load what only a run needs, nor ``reactloop run``
# what only some of its options need. Each is checked to dodge no circle (moving it to the top
# would close none) and to keep its target out of what importing the importer loads.
DEFERRED: dict[tuple[str, str], str] = {
    ("reactloop.agent_runs", "reactloop.loop.run_loop"): "the loop loads with the first Agent",
    ("reactloop.agent_runs", "reactloop.loop.runtime.custody"): "a run thread ready at Agent()",
    ("reactloop.loop.run_parts", "reactloop.journal.workspace_record"): "an observed run_start",
    ("reactloop.agent", "reactloop.loop.async_runner"): "arun and astream: asyncio code",
    ("reactloop.agent_runs", "reactloop.resume.resume_run"): "Agent.resume: the resumed loop",
    ("reactloop.agent", "reactloop.subagents"): "Agent.as_tool: the loop, as a first run",
    ("reactloop.agent", "reactloop.subagent_reach"): "an agent with agent tools: their reach",
    ("reactloop.cli.run_tools", "reactloop.tools.mcp"): "reactloop run --mcp (asyncio, the client)",
    ("reactloop.cli.run_settings", "reactloop.loop.command_check"): "run --verify (the sandbox)",
    ("reactloop.cli.run_settings", "reactloop.usage"): "reactloop run --prices",
    (
        "reactloop.cli.approvers",
        "reactloop.tools.mcp",
    ): "who answers an MCP server's question",
    ("reactloop.cli.unloaded", "reactloop.loop.run_loop"): "the run of a model that failed to load",
    ("reactloop.cli.checks_record", "reactloop.loop.command_check"): "a resumed run's --verify",
    ("reactloop.cli.record_place", "reactloop.sandbox.command"): "bash's sandbox, probed for bash",
    ("reactloop.cli.trace", "reactloop.cli.resume_trust"): "replay's checks, not view's or cost's",
    ("reactloop.cli.checks_record", "reactloop.output.json_schema"): "a resumed --output-schema",
    ("reactloop.cli.checks_record", "reactloop.usage.prices"): "a resumed run's --prices",
    # ``import reactloop`` loads these three; the journal's event classes load with the run
    ("reactloop.loop.completion_checks", "reactloop.journal.schema"): "a check's event",
    ("reactloop.loop.completion_checks", "reactloop.journal.warning_kinds"): "verify_failed",
    ("reactloop.tools.search", "reactloop.journal.schema"): "a search's event",
    ("reactloop.tools.skills", "reactloop.journal.schema"): "a skill's activation event",
}


def test_import_reactloop_loads_no_adapter_sdk() -> None:
    script = "import json, sys; import reactloop; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
    )
    heavy = sorted(m for m in loaded if m.split(".")[0] in OPTIONAL_SDKS)
    assert heavy == [], f"import reactloop loads {heavy}"


@pytest.mark.parametrize("by_name", [False, True], ids=["imports", "with importlib strings"])
def test_no_import_cycle(by_name: bool) -> None:
    """No circle of module-level imports; nor once the ``importlib`` strings count as imports
    (a registry line, a lazy name's home): a name looked up by its string must not import the
    module that holds the string back."""
    graph = module_graph(by_name=by_name)
    cycles = []
    for component in strongly_connected(graph):
        first = component[0]
        back = min(
            (path_between(graph, nxt, first) or [] for nxt in graph[first] if nxt in component),
            key=len,
        )
        cycles.append(" → ".join([first, *back]))
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def function_level_imports() -> list[Import]:
    return [
        imp
        for imp in ALL_IMPORTS
        if imp.function is not None and imp.target != imp.importer and not imp.by_name
    ]


def describe(imp: Import, graph: dict[str, set[str]]) -> str:
    where = f"{MODULES[imp.importer].relative_to(SRC)}:{imp.line} in {imp.function}()"
    circle = path_between(graph, imp.target, imp.importer)
    why = (
        "dodges a cycle: " + " → ".join(circle)
        if circle
        else "no cycle at module level: move it to the top, or allow it as a lazy optional import"
    )
    return f"{where} imports {imp.target} ({why})"


def test_no_function_level_import_of_our_modules() -> None:
    graph = module_graph()
    hidden = [
        describe(imp, graph)
        for imp in function_level_imports()
        if (imp.importer, imp.target) not in LAZY_OPTIONAL | DEFERRED
    ]
    assert hidden == [], "imports inside functions:\n" + "\n".join(hidden)


@pytest.mark.parametrize("entry", sorted(DEFERRED), ids=lambda e: f"{e[0]}->{e[1]}")
def test_each_deferred_import_exists_and_dodges_no_circle(entry: tuple[str, str]) -> None:
    importer, target = entry
    assert any((imp.importer, imp.target) == entry for imp in function_level_imports()), (
        f"{importer} no longer imports {target} in a function: drop it from DEFERRED"
    )
    circle = path_between(module_graph(), target, importer)
    assert circle is None, "it hides a circle: " + " → ".join(circle or [])
    script = f"import json, sys; import {importer}; print(json.dumps({target!r} in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(loaded) is False, f"importing {importer} loads {target} all the same"


@pytest.mark.parametrize("entry", sorted(LAZY_OPTIONAL), ids=lambda e: f"{e[0]}->{e[1]}")
def test_each_allowed_lazy_import_exists_and_loads_an_optional_sdk(entry: tuple[str, str]) -> None:
    importer, target = entry
    assert any((imp.importer, imp.target) == entry for imp in function_level_imports()), (
        f"{importer} no longer imports {target} in a function: drop it from LAZY_OPTIONAL"
    )
    script = (
        f"import json, sys; import {target}; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
    )
    assert set(loaded) & set(OPTIONAL_SDKS), f"{target} loads no optional SDK: import it on top"


def test_the_graph_reader_sees_what_python_does(tmp_path: Path) -> None:
    """The reader's rules, on a made-up module: what counts as a module-level edge."""
    source = (
        "from __future__ import annotations\n"
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "from reactloop.errors import UsageError\n"
        "from reactloop import models\n"
        "if TYPE_CHECKING:\n"
        "    from reactloop.agent import Agent\n"
        "else:\n"
        "    import reactloop.journal.writer\n"
        "try:\n"
        "    from reactloop.usage.steps import step_of\n"
        "except ImportError:\n"
        "    pass\n"
        "class C:\n"
        "    from reactloop.limits import Limits\n"
        "def f():\n"
        "    from reactloop.loop.run_loop import RunLoop\n"
        "    def g():\n"
        "        import reactloop.viewer.render\n"
    )
    fake = "reactloop.fake_module_for_test"
    MODULES[fake] = tmp_path / "fake_module_for_test.py"
    MODULES[fake].write_text(source, encoding="utf-8")
    try:
        found = {(imp.target, imp.function) for imp in imports_of(fake)}
    finally:
        del MODULES[fake]
    assert found == {
        ("reactloop.errors", None),
        ("reactloop.models", None),
        ("reactloop.journal.writer", None),
        ("reactloop.usage.steps", None),
        ("reactloop.limits", None),
        ("reactloop.loop.run_loop", "f"),
        ("reactloop.viewer.render", "f.g"),
    }


def test_cycle_finder_finds_a_cycle_and_its_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert strongly_connected(graph) == [["a", "b", "c"], ["e"]]
    assert path_between(graph, "b", "a") == ["b", "c", "a"]
    assert path_between(graph, "d", "a") is None
