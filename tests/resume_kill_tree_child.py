"""The process ``test_resume_kill_tree.py`` kills: a tree of agents (a root, two workers and a
helper under the first, ``Agent.as_tool``) whose tools count their executions in one file,
SIGKILLed at a chosen moment by itself (``resume_kill_child.Killer``: after the K-th event of
the whole tree, in the K-th tool run before or after its side effect, halfway through the K-th
journal line).

    python resume_kill_tree_child.py run|resume TRACE COUNTER KILL OUT
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, Tool
from resume_kill_child import Killer, tools

LIMITS = Limits(max_model_calls=60, max_tool_calls=60, max_seconds=None)
WORKER_STEPS = 6


def worker_script(first: int, helper: bool = False) -> list[Any]:
    """``bump`` and ``put`` in turn, each with arguments no other call of the tree has; with
    ``helper``, a call of the ``helper`` agent after the second (a grandchild of the root)."""
    turns: list[Any] = []
    for i in range(first, first + WORKER_STEPS):
        call = {"name": "bump", "arguments": {"n": i}}
        if i % 2:
            call = {"name": "put", "arguments": {"key": f"k{i}"}}
        turns.append({"content": f"step {i}", "tool_calls": [call]})
    if helper:
        turns.insert(2, {"tool_calls": [{"name": "helper", "arguments": {"task": "from 20"}}]})
    return [*turns, {"content": f"worker {first} done"}]


ROOT_SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "worker_a", "arguments": {"task": "count from 0"}}]},
    {"tool_calls": [{"name": "bump", "arguments": {"n": 100}}]},
    {"tool_calls": [{"name": "worker_b", "arguments": {"task": "count from 10"}}]},
    {"content": "done"},
]


def tree(counter: Path, killer: Killer) -> Agent:
    """The root agent: its own two tools and the two workers, every agent observed by
    ``killer`` (so that it counts the events of the whole tree)."""
    own = tools(counter, killer)

    def agent(script: list[Any], tools: list[Tool]) -> Agent:
        return Agent(ScriptedModel(script), tools, observers=[killer], limits=LIMITS)

    helper = agent(worker_script(20), own).as_tool("helper", "Counts.")
    workers: list[Tool] = [
        agent(worker_script(0, helper=True), [*own, helper]).as_tool("worker_a", "Counts."),
        agent(worker_script(10), own).as_tool("worker_b", "Counts."),
    ]
    return Agent(ScriptedModel(ROOT_SCRIPT), [*own, *workers], observers=[killer], limits=LIMITS)


def main(argv: list[str]) -> None:
    mode, trace, counter, spec, out = argv
    killer = Killer(spec)
    killer.patch_writes()
    root = tree(Path(counter), killer)
    if mode == "run":
        with Journal(trace) as journal:
            result = root.run("count, with two workers", journal=journal)
    else:
        result = root.resume(trace)
    history = [message.to_dict() for message in result.history]
    Path(out).write_text(json.dumps({"stop": str(result.stop_reason), "history": history}))


if __name__ == "__main__":
    main(sys.argv[1:])
