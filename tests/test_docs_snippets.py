"""Every ```python snippet in docs/*.md runs as written and imports only public paths.

(The README's snippets are run by ``test_readme.py``.)

A snippet runs in a fresh folder, with a fresh namespace, and finds there what a reader who
just made a run would have: ``run.jsonl`` and ``runs/my-run.jsonl`` (the journal of a finished
three-step run of ``gpt-4o-mini`` with the calculator), ``prices.json`` (a price table for it)
and ``tests/wire_formats/`` (the repository's recorded wire files, as in a clone).

A snippet that needs what a test machine may lack says so in a first-line comment:
``# needs: local model`` runs only where ``xllamacpp`` imports, ``# needs: network`` never runs
here (tests reach nothing beyond 127.0.0.1). Such a snippet is still compiled and its imports
checked. With ``REACTLOOP_REQUIRE_SLOW=1`` (CI) a missing ``local model`` fails instead of
skipping.

Public paths: the modules declared in ``tests/public_api.py``, each for the names it exports,
and an adapter package's public classes (``from reactloop.models.openai import
OpenAIChatModel``: a package under ``reactloop.models`` whose ``__all__`` names them).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from public_api import LAZY_FROM_REACTLOOP, PUBLIC_API
from reactloop import Agent, Journal, ScriptedModel
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PUBLIC_MODULES = frozenset(PUBLIC_API)
ADAPTER_PARENT = "reactloop.models"
_MARKER = re.compile(r"#\s*needs:\s*(.+)")
# A model spec that loads the embedded model (``"local"``, ``"local:smollm2-135m"``).
_LOCAL_SPEC = re.compile(r"""["']local(:[^"']*)?["']""")


def _has_engine() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


NEEDS = {"local model": _has_engine, "network": lambda: False}
REQUIRED_WHEN_SLOW = frozenset({"local model"})

# Snippets that fail today, each with what must change in its doc. An entry whose snippet
# passes fails the test (strict): remove it then. Issue 11 empties these tables.
KNOWN_FAILURES: dict[str, str] = {}
# Snippets that must not run as they stand (they would load a real model): they need a marker.
NOT_RUNNABLE: dict[str, str] = {}
# Snippets that import private paths today: what is public must come from a public path.
KNOWN_PRIVATE_IMPORTS: dict[str, str] = {}


@dataclass(frozen=True)
class Snippet:
    doc: str
    index: int
    line: int
    code: str

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.index}"

    @property
    def needs(self) -> tuple[str, ...]:
        first = self.code.lstrip().splitlines()[0] if self.code.strip() else ""
        found = _MARKER.fullmatch(first.strip())
        if found is None:
            return ()
        return tuple(part.strip() for part in found.group(1).split(","))


def snippets_in(text: str, doc: str) -> list[Snippet]:
    """The ```python blocks of a Markdown text; ``line`` is the block's first line of code."""
    found = []
    for index, match in enumerate(re.finditer(r"^```python\n(.*?)^```", text, re.M | re.S)):
        line = text.count("\n", 0, match.start(1)) + 1
        found.append(Snippet(doc, index, line, match.group(1)))
    return found


def doc_snippets() -> list[Snippet]:
    return [
        snippet
        for path in sorted(DOCS.glob("*.md"))
        for snippet in snippets_in(path.read_text(encoding="utf-8"), path.name)
    ]


SNIPPETS = doc_snippets()


def test_docs_have_snippets() -> None:
    assert len(SNIPPETS) >= 10, [s.id for s in SNIPPETS]


def test_every_listed_snippet_exists() -> None:
    ids = {s.id for s in SNIPPETS}
    for table in (KNOWN_FAILURES, NOT_RUNNABLE, KNOWN_PRIVATE_IMPORTS):
        assert set(table) <= ids, sorted(set(table) - ids)


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder a snippet runs in (see the module docstring)."""
    write_journal(tmp_path / "run.jsonl")
    (tmp_path / "runs").mkdir()
    write_journal(tmp_path / "runs" / "my-run.jsonl")
    prices = {"gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6}}
    (tmp_path / "prices.json").write_text(json.dumps(prices), encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "wire_formats").symlink_to(ROOT / "tests" / "wire_formats")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_journal(path: Path) -> None:
    usage = {"input_tokens": 900, "cached_tokens": 0, "output_tokens": 20}
    turns = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "35 * 12"}}]},
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "420 + 1"}}]},
        {"content": "421"},
    ]
    turns = [
        {**turn, "usage": {**usage, "input_tokens": 900 + 150 * n}} for n, turn in enumerate(turns)
    ]
    tools = build_tools(("calculator",), ToolContext())
    with Journal(path) as journal:
        agent = Agent(
            ScriptedModel(turns, name="gpt-4o-mini"),
            tools,
            journal=journal,
            config={"tools": ["calculator"]},
        )
        assert agent.run("What is 35 * 12 + 1?").answer == "421"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_runs(snippet: Snippet, scratch: Path, request: pytest.FixtureRequest) -> None:
    code = compile(snippet.code, f"docs/{snippet.doc}:{snippet.line}", "exec")
    if snippet.id in NOT_RUNNABLE:
        assert not snippet.needs, f"{snippet.id} has its marker now: remove it from NOT_RUNNABLE"
        pytest.xfail(NOT_RUNNABLE[snippet.id])
    if _LOCAL_SPEC.search(snippet.code) and "local model" not in snippet.needs:
        pytest.fail(f"{snippet.id} loads the embedded model: mark it '# needs: local model'")
    _skip_unless_available(snippet.needs)
    if snippet.id in KNOWN_FAILURES:
        _expect_failure(request, KNOWN_FAILURES, snippet.id, "KNOWN_FAILURES")
    exec(code, {"__name__": "__doc_snippet__"})


def _expect_failure(
    request: pytest.FixtureRequest, table: dict[str, str], key: str, name: str
) -> None:
    reason = f"{table[key]} (once it passes, delete {key!r} from {name} in {Path(__file__).name})"
    request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


def _skip_unless_available(needs: tuple[str, ...]) -> None:
    unknown = [need for need in needs if need not in NEEDS]
    assert not unknown, f"unknown '# needs:' {unknown}; known: {sorted(NEEDS)}"
    for need in needs:
        if NEEDS[need]():
            continue
        if need in REQUIRED_WHEN_SLOW and os.environ.get("REACTLOOP_REQUIRE_SLOW") == "1":
            pytest.fail(f"the snippet needs a {need}, and REACTLOOP_REQUIRE_SLOW=1")
        pytest.skip(f"needs a {need}")


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.id)
def test_snippet_imports_only_public_paths(
    snippet: Snippet, request: pytest.FixtureRequest
) -> None:
    if snippet.id in KNOWN_PRIVATE_IMPORTS:
        _expect_failure(request, KNOWN_PRIVATE_IMPORTS, snippet.id, "KNOWN_PRIVATE_IMPORTS")
    private = private_imports(ast.parse(snippet.code))
    assert not private, f"docs/{snippet.doc}:{snippet.line} imports private paths: {private}"


def private_imports(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _ours(a.name) and a.name not in PUBLIC_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module or ""):
            names = [a.name for a in node.names]
            if not _public_from(node.module or "", names):
                found.append(f"from {node.module} import {', '.join(names)}")
    return found


def _ours(module: str) -> bool:
    return module == "reactloop" or module.startswith("reactloop.")


def _public_from(module: str, names: list[str]) -> bool:
    if module in PUBLIC_MODULES:
        exported = set(PUBLIC_API[module])
        if module == "reactloop":
            exported |= set(LAZY_FROM_REACTLOOP)
        return set(names) <= exported
    parent, _, leaf = module.rpartition(".")
    if parent != ADAPTER_PARENT or not leaf:
        return False
    spec = importlib.util.find_spec(module)
    if spec is None or spec.submodule_search_locations is None:  # a module, not a package
        return False
    exported = set(getattr(importlib.import_module(module), "__all__", ()))
    return set(names) <= exported


def test_the_public_path_check_tells_public_from_private() -> None:
    tree = ast.parse(
        "import reactloop\n"
        "from reactloop import Agent\n"
        "from reactloop.testing import FakeOpenAIServer\n"
        "from reactloop.usage.usage_report import usage_report\n"
        "import reactloop.journal.writer\n"
        "from reactloop.models import resolve_model\n"
        "from reactloop.models import not_exported\n"
        "from reactloop.models.scripted import ScriptedModel\n"
        "from . import sibling\n"
        "import json\n"
    )
    assert private_imports(tree) == [
        "from reactloop.usage.usage_report import usage_report",
        "reactloop.journal.writer",
        "from reactloop.models import not_exported",
        "from reactloop.models.scripted import ScriptedModel",
    ]


def test_an_adapter_package_public_class_is_a_public_path() -> None:
    models = ROOT / "src" / "reactloop" / "models"
    packages = sorted(p.parent.name for p in models.glob("*/__init__.py"))
    exported = [
        (name, importlib.import_module(f"{ADAPTER_PARENT}.{name}").__all__)
        for name in packages
        if getattr(importlib.import_module(f"{ADAPTER_PARENT}.{name}"), "__all__", None)
    ]
    if not exported:
        pytest.skip("no adapter package with __all__ yet")
    for name, names in exported:
        public = f"from {ADAPTER_PARENT}.{name} import {names[0]}\n"
        private = f"from {ADAPTER_PARENT}.{name}.anything import {names[0]}\n"
        unlisted = f"from {ADAPTER_PARENT}.{name} import not_in_all_{name}\n"
        assert private_imports(ast.parse(public + private + unlisted)) == [
            private.strip(),
            unlisted.strip(),
        ]


code_lines = st.lists(
    st.text(
        st.characters(
            blacklist_categories=("Cs",),
            blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
        ),
        max_size=30,
    ).filter(lambda line: not line.startswith("```")),
    max_size=6,
).map(lambda lines: "".join(f"{line}\n" for line in lines))
prose = st.sampled_from(["", "Some prose.\n", "```text\nnot python\n```\n", "```py\nx\n```\n"])


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(st.tuples(prose, code_lines), max_size=5), tail=prose)
def test_snippets_are_read_back_with_their_lines(blocks: list[tuple[str, str]], tail: str) -> None:
    text = "".join(f"{before}```python\n{code}```\n" for before, code in blocks) + tail
    found = snippets_in(text, "x.md")
    assert [s.code for s in found] == [code for _, code in blocks]
    lines = text.split("\n")
    for snippet in found:
        assert lines[snippet.line - 2] == "```python"


def test_a_needs_marker_is_read_from_the_first_line() -> None:
    (marked, plain, late) = snippets_in(
        "```python\n# needs: local model, network\nx = 1\n```\n"
        "```python\nx = 1\n```\n"
        "```python\nx = 1\n# needs: network\n```\n",
        "x.md",
    )
    assert marked.needs == ("local model", "network")
    assert plain.needs == () and late.needs == ()
