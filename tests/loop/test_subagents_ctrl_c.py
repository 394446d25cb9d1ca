"""A Ctrl-C reaches every level of a tree of agents: SIGINT, sent while a grandchild's tool runs,
stops the grandchild, the child and the root ``cancelled`` (in a process of its own, whose
main thread runs the root, as ``reactloop run`` does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, os, signal, sys, threading
from pathlib import Path
from reactloop import Agent, Journal, ScriptedModel, tool

@tool(read_only=True)
def probe(q: str) -> str:
    '''Wait for a Ctrl-C.'''
    os.kill(os.getpid(), signal.SIGINT)
    threading.Event().wait(30)  # given up on at the Ctrl-C
    return "never"

stopped = []

def delegating(tool_name, arguments, tools):
    first = {"tool_calls": [{"name": tool_name, "arguments": arguments}]}
    ended = threading.Event()
    stopped.append(ended)
    on_stop = lambda event: ended.set() if event.type == "stop" else None
    return Agent(ScriptedModel([first, "never"]), tools, observers=[on_stop])

grandchild = delegating("probe", {"q": "x"}, [probe])
child = delegating("grandchild", {"task": "t"}, [grandchild.as_tool("grandchild", "G.")])
root = delegating("child", {"task": "t"}, [child.as_tool("child", "C.")])
folder = Path(sys.argv[1])
with Journal(folder / "root.jsonl") as journal:
    result = root.run("go", journal=journal)
ended = [event.wait(10) for event in stopped]
print(json.dumps({"root": str(result.stop_reason), "ended": ended}))
"""


def _stops(path: Path) -> list[str]:
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["stop_reason"] for e in events if e["type"] == "stop"]


def test_ctrl_c_reaches_a_grandchild(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"root": "cancelled", "ended": [True, True, True]}
    assert _stops(tmp_path / "root.jsonl") == ["cancelled"]
    # the child and the grandchild stop by themselves: they share the root's cancel flag
    assert _stops(tmp_path / "root.child-1.jsonl") == ["cancelled"]
    assert _stops(tmp_path / "root.child-1.grandchild-1.jsonl") == ["cancelled"]
