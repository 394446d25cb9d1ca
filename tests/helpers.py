"""What many test modules need, in one place (``tests/`` is on ``sys.path``: ``from helpers
import call``).

- ``invoke``: the command line in this process, its exit code and both outputs;
  ``reactloop``: the command line in a process of its own (``python -m reactloop``);
- ``script``: a scripted model's turns written to a file, as a ``--model`` spec;
- ``call``: a ``ToolCall`` whose arguments are the given keywords, as JSON; ``executed``:
  such a call run by a ``Toolbox``;
- ``scripted_call`` / ``call_turn``: a call and a turn as a ``ScriptedModel`` reads them;
- ``add``: a read-only tool that adds two integers;
- ``new_in_checkout_runs``: what appeared in the checkout's ``runs/`` since the session began
  (``conftest.py`` fails the session when anything did);
- ``AS_THE_COMMAND``: the first lines of a ``python -c`` script whose process then passes for
  ``python -m reactloop`` (what the eval's forkserver and collector look at).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from reactloop import Toolbox, ToolCall, ToolResult, tool

AS_THE_COMMAND = """
import sys, types
main = types.ModuleType("__main__")
main.__spec__ = types.SimpleNamespace(name="reactloop.__main__")  # python -m reactloop
sys.modules["__main__"] = main
"""

CHECKOUT_RUNS = Path(__file__).resolve().parent.parent / "runs"


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.is_dir() else set()


_RUNS_BEFORE = _listing(CHECKOUT_RUNS)  # conftest.py imports this module as the session starts


def new_in_checkout_runs() -> set[str]:
    """What appeared in the checkout's ``runs/`` since the test session began."""
    return _listing(CHECKOUT_RUNS) - _RUNS_BEFORE


def invoke(*args: str) -> tuple[int, str, str]:
    """``reactloop ARGS`` run by click's test runner: exit code, stdout, stderr. A crash of
    the command (an exception other than an exit) fails the test: it is always a bug."""
    from click.testing import CliRunner

    from reactloop.cli import main

    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def reactloop(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``reactloop ARGS`` in a process of its own, in ``cwd``, without colour; ``env`` added
    to this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "reactloop", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **env},
        timeout=120,
        check=False,
    )


def script(folder: Path, turns: list[Any]) -> str:
    """``turns`` written to ``folder/script.json``; the spec ``scripted:PATH``."""
    path = folder / "script.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def call(name: str, call_id: str = "c1", /, **arguments: Any) -> ToolCall:
    """A call of ``name`` with ``arguments`` as its JSON text (``call_id`` ``""``: none)."""
    return ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))


def executed(box: Toolbox, name: str, /, **arguments: Any) -> ToolResult:
    """What ``box`` makes of a call of ``name`` with ``arguments``."""
    return box.execute(call(name, **arguments))


def scripted_call(name: str, /, **arguments: Any) -> dict[str, Any]:
    """A call as a ``ScriptedModel`` turn lists it (no id: the script makes one)."""
    return {"name": name, "arguments": arguments}


def call_turn(name: str, /, **arguments: Any) -> dict[str, Any]:
    """A ``ScriptedModel`` turn that makes one call."""
    return {"tool_calls": [scripted_call(name, **arguments)]}


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b
