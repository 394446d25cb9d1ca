"""The package's import graph: ``import reactloop`` stays light, no module imports itself in a
circle, and no import hides inside a function to dodge a circle.

The graph is read from the source with ``ast``, walking every module of ``src/reactloop``:
an edge for each import that runs when the module is imported (module level, also inside a
module-level ``if``/``try`` or a class body; not under ``if TYPE_CHECKING:``). Importing a
submodule also runs its parent packages' ``__init__``; those implicit edges are left out, as
Python finishes a parent before its child and they cannot close a circle by themselves.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "reactloop"
# Third-party packages behind optional extras (adapters, evaluation): ``import reactloop`` must
# not load them.
OPTIONAL_SDKS = ("openai", "anthropic", "llama_cpp", "mcp", "httpx", "httpcore", "llm", "ray")
# Function-level imports of our own modules that are allowed: lazy imports of a module that
# loads an optional dependency (one of OPTIONAL_SDKS), so that ``import reactloop`` does not.
# (importing module, imported module) -> why. Each entry is checked to still be true.
LAZY_OPTIONAL: dict[tuple[str, str], str] = {}
# Function-level imports deferred for start-up time: ``import reactloop`` (for ``@tool``, the
# types, an ``Agent`` to configure) does not load what only a run needs, nor ``reactloop run``
# what only some of its options need. Each is checked to dodge no circle (moving it to the top
# would close none) and to keep its target out of what importing the importer loads.
DEFERRED: dict[tuple[str, str], str] = {
    ("reactloop.agent", "reactloop.loop"): "the loop and its modules load with the first run",
    ("reactloop.agent", "reactloop.asyncrun"): "arun and astream: asyncio code",
    ("reactloop.tools.toolbox", "reactloop.tools.execution"): "Toolbox.execute_many alone",
    ("reactloop.cli.runner", "reactloop.tools.mcp"): "reactloop run --mcp (asyncio, the client)",
    ("reactloop.cli.runner", "reactloop.commandcheck"): "reactloop run --verify (the sandbox)",
    ("reactloop.cli.runner", "reactloop.usage"): "reactloop run --prices",
    ("reactloop.cli.unloaded", "reactloop.loop"): "the run of a model that failed to load",
}


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    function: str | None = None  # the enclosing function, for a function-level import


def module_files() -> dict[str, Path]:
    files = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    return files


MODULES = module_files()


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def resolve(importer: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Our modules an import statement loads (third-party ones are dropped)."""
    if isinstance(node, ast.Import):
        return [_known(alias.name) for alias in node.names if _known(alias.name)]
    base = node.module or ""
    if node.level:
        package = importer if is_package(importer) else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}".rstrip(".")
    if not _known(base):
        return []
    submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    plain = len(submodules) < len(node.names)  # some names are attributes of ``base``
    return ([base] if plain else []) + submodules


def _known(name: str) -> str:
    """``name``, or the nearest enclosing module of ours (``import a.b`` loads ``a.b``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name if name.startswith(PACKAGE) else ""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"), str(MODULES[name]))
    yield from _walk(name, tree.body, function=None)


def _walk(name: str, body: list[ast.stmt], function: str | None) -> Iterator[Import]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in resolve(name, node):
                yield Import(name, target, node.lineno, function)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _walk(name, node.body, f"{function}.{node.name}" if function else node.name)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _walk(name, node.orelse, function)
        else:
            for child in _child_bodies(node):
                yield from _walk(name, child, function)


def _child_bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        value = getattr(node, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(node, "handlers", []):
        yield handler.body
    for case in getattr(node, "cases", []):
        yield case.body


ALL_IMPORTS = [imp for name in MODULES for imp in imports_of(name)]


def module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for imp in ALL_IMPORTS:
        if imp.function is None:
            graph[imp.importer].add(imp.target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module, or a module that imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def path_between(graph: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A shortest chain of module-level imports from ``start`` to ``goal``."""
    previous: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt == goal:
                    chain = [goal, node]
                    while chain[-1] != start:
                        chain.append(previous[chain[-1]])
                    return chain[::-1]
                if nxt not in seen:
                    seen.add(nxt)
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return None


def test_import_reactloop_loads_no_adapter_sdk() -> None:
    script = "import json, sys; import reactloop; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout
    )
    heavy = sorted(m for m in loaded if m.split(".")[0] in OPTIONAL_SDKS)
    assert heavy == [], f"import reactloop loads {heavy}"


def test_no_import_cycle() -> None:
    graph = module_graph()
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
    return [imp for imp in ALL_IMPORTS if imp.function is not None and imp.target != imp.importer]


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
        "    import reactloop.journal\n"
        "try:\n"
        "    from reactloop.usage.steps import step_of\n"
        "except ImportError:\n"
        "    pass\n"
        "class C:\n"
        "    from reactloop.limits import Limits\n"
        "def f():\n"
        "    from reactloop.loop import RunLoop\n"
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
        ("reactloop.journal", None),
        ("reactloop.usage.steps", None),
        ("reactloop.limits", None),
        ("reactloop.loop", "f"),
        ("reactloop.viewer.render", "f.g"),
    }


def test_cycle_finder_finds_a_cycle_and_its_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert strongly_connected(graph) == [["a", "b", "c"], ["e"]]
    assert path_between(graph, "b", "a") == ["b", "c", "a"]
    assert path_between(graph, "d", "a") is None
