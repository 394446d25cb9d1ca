"""The public API is declared (tests/public_api.py) and pinned: each module's ``__all__``, the
lazy adapter classes, what ``import reactloop`` does not load, and what ``Agent(...)`` loads
and sets up so that a first run does what a later one does."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from public_api import LAZY_FROM_REACTLOOP, NOT_LOADED_BY_IMPORT, PUBLIC_API


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_each_public_module_exports_exactly_what_is_declared(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(PUBLIC_API[module])
    for name in imported.__all__:
        assert hasattr(imported, name), f"{module}.{name} is declared but missing"


def test_adapter_classes_are_importable_lazily_from_reactloop() -> None:
    import reactloop

    assert reactloop._LAZY == LAZY_FROM_REACTLOOP
    for name, module in LAZY_FROM_REACTLOOP.items():
        if importlib.util.find_spec(module) is None:
            continue
        try:
            lazy = getattr(reactloop, name)
        except ImportError:  # its SDK (an optional extra) is not installed here
            continue
        assert lazy is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError):
        reactloop.NoSuchThing  # noqa: B018


def test_import_reactloop_loads_no_adapter_sdk() -> None:
    code = (
        "import json, sys, reactloop; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert not loaded & set(NOT_LOADED_BY_IMPORT), loaded & set(NOT_LOADED_BY_IMPORT)


def test_import_reactloop_loads_the_types_but_not_the_loop_that_runs_them() -> None:
    """``import reactloop`` (for ``@tool``, types, an ``Agent`` to configure) stays small: the
    loop and the executor load when an ``Agent`` is built, asyncio with the first ``arun``, the
    model registry with the first lookup."""
    code = "import json, sys, reactloop; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    later = {
        "asyncio",
        "concurrent.futures",
        "reactloop.loop.run_loop",
        "reactloop.loop.tool_calls",
        "reactloop.loop.runtime.executor",
        "reactloop.models.registry",
        "reactloop.loop.async_runner",
    }
    assert not loaded & later, loaded & later
    assert {"reactloop.agent", "reactloop.messages", "reactloop.tools.base"} <= loaded


def test_an_agent_loads_the_loop_so_that_its_first_run_loads_nothing() -> None:
    """``Agent(...)`` loads what every run needs (issue 40: the first run costs what a later
    one does); a run with one call a turn then imports nothing, ``concurrent.futures`` (and
    the ``logging`` it imports) not at all, and finds its run thread waiting."""
    code = (
        "import json, sys, threading\n"
        "from reactloop import Agent, ModelTurn, ScriptedModel, ToolCall, tool\n"
        "@tool(read_only=True)\n"
        "def echo(n: int) -> int:\n"
        "    return n\n"
        "turns = [ModelTurn(tool_calls=(ToolCall(id='c', name='echo', arguments='{\"n\": 1}'),)),\n"
        "         ModelTurn(text='done')]\n"
        "agent = Agent(ScriptedModel(turns), [echo])\n"
        "waiting = [t.name for t in threading.enumerate() if t.name.startswith('reactloop-run')]\n"
        "before = set(sys.modules)\n"
        "answer = agent.run('go').answer\n"
        "print(json.dumps([answer, sorted(set(sys.modules) - before), waiting,\n"
        "                  'concurrent.futures' in sys.modules, 'logging' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    answer, loaded_by_run, waiting, futures, logging = json.loads(out)
    assert answer == "done"
    assert loaded_by_run == []
    assert waiting == ["reactloop-run-limited"]  # the default time limit: a run thread
    assert not futures and not logging


_FIRST_AND_SECOND_RUN = """
import gc, json, sys, threading
from reactloop import Agent, ModelTurn, ScriptedModel, ToolCall, tool
from reactloop.loop.runtime import custody
custody._SLICE = 3600.0  # the waiting thread wakes for the run's end only, however slow it is
gc.disable()  # no finalizer of the imports' garbage runs inside one of the runs

@tool(read_only=True)
def echo(n: int) -> int:
    return n

called = None
def note(frame, event, arg):
    if called is not None and event == "call":
        code = frame.f_code
        called.add(f"{code.co_filename}:{code.co_firstlineno} {code.co_qualname}")

threading.setprofile(note)  # before the first Agent, which starts the run thread
sys.setprofile(note)
runs = []
for _ in range(2):
    calls = [ToolCall(id=f"c{i}", name="echo", arguments=json.dumps({"n": i})) for i in range(3)]
    turns = [ModelTurn(tool_calls=(c,)) for c in calls] + [ModelTurn(text="done")]
    agent = Agent(ScriptedModel(turns), [echo])
    called = set()
    assert agent.run("go").answer == "done"
    runs.append(sorted(called))
    called = None
print(json.dumps(runs))
"""


def test_a_first_run_calls_no_function_that_a_second_run_does_not() -> None:
    """Issue 40: what a run sets up at first use (a tool's cached properties, a lazy import,
    a cache filled) is set up by ``Agent(...)`` instead, so that the first run of a fresh
    process runs the Python code a later run does (what is left is the interpreter's own
    warm-up, docs/benchmarks.md). Every Python function called on any thread counts."""
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_AND_SECOND_RUN], capture_output=True, text=True, check=True
    ).stdout
    first, second = json.loads(out)
    assert len(first) > 50  # the profile saw the run, on its own thread too
    assert sorted(set(first) - set(second)) == []


_PUBLIC_NAMES = """
import importlib, json, sys, types
module = importlib.import_module(sys.argv[1])
names = [
    name for name, value in vars(module).items()
    if not name.startswith("_") and not isinstance(value, types.ModuleType)
    and name not in ("annotations", "TYPE_CHECKING")
    and getattr(value, "__module__", None) not in ("typing", "collections.abc")
]
lazy = getattr(module, "_LAZY", {})
print(json.dumps(sorted(set(names) | set(lazy))))
"""


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_each_public_module_has_no_public_name_beyond_its_all(module: str) -> None:
    """Every name a public module offers without an underscore is in its ``__all__`` (after
    httpx's tests/test_exported_members.py): helpers are private, ``__all__`` is the truth.
    Read in a fresh interpreter, so that submodules other tests imported do not count."""
    out = subprocess.run(
        [sys.executable, "-c", _PUBLIC_NAMES, module], capture_output=True, text=True, check=True
    ).stdout
    beyond = set(json.loads(out)) - set(importlib.import_module(module).__all__)
    assert sorted(beyond) == []
