"""The package's import graph, read from the source with ``ast`` (tests/test_import_graph.py and
tests/test_layers.py check it).

An edge for each import that runs when the module is imported (module level, also inside a
module-level ``if``/``try`` or a class body; not under ``if TYPE_CHECKING:``), each import
inside a function (with the function's name), and each ``importlib`` string of ours a module
holds (``"reactloop.models.openai:from_spec"`` in a registry, a lazy name's home): the module
that holds it imports the target when the name is asked for. Importing a submodule also runs
its parent packages' ``__init__``; those implicit edges are left out, as Python finishes a
parent before its child and they cannot close a circle by themselves.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "reactloop"
# Tables of strings that another module resolves: the string's import is that module's.
RESOLVED_BY = {"reactloop.models.roster": "reactloop.models.registry"}
_IMPORTLIB_STRING = re.compile(r"^reactloop(\.\w+)+(:\w+)?$")


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    function: str | None = None  # the enclosing function, for a function-level import
    by_name: bool = False  # an importlib string, not an import statement


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
    yield from _strings(name, tree)


def _strings(name: str, tree: ast.Module) -> Iterator[Import]:
    """The ``importlib`` strings of ours in a module: ``"module:attribute"`` anywhere, and
    module names as the values of a table (a lazy name's home). Each names a module it
    imports by name. (A package named for its files, ``resources.files("reactloop.viewer")``,
    is neither.)"""
    for node in ast.walk(tree):
        values = [node] if isinstance(node, ast.Constant) else []
        if isinstance(node, ast.Dict):
            values = [v for v in node.values if isinstance(v, ast.Constant)]
        for value in values:
            text = value.value
            if not isinstance(text, str) or not _IMPORTLIB_STRING.match(text):
                continue
            if ":" not in text and value is node:
                continue
            target = text.partition(":")[0]
            importer = RESOLVED_BY.get(name, name)
            if target in MODULES and target != importer:
                yield Import(importer, target, value.lineno, by_name=True)


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


def module_graph(*, by_name: bool = False) -> dict[str, set[str]]:
    """Module-level imports (with ``by_name``: and the ``importlib`` strings)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for imp in ALL_IMPORTS:
        if imp.function is None and (by_name or not imp.by_name):
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
