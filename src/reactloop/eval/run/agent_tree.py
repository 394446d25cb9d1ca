"""Eval tasks whose agent has sub-agents (``Agent.as_tool``), scored as one agent.

A task's ``agents`` (a JSONL suite: ``"agents": [{"name": "researcher", "description": "...",
"tools": ["lookup"], "instructions": "..."}]``) are tools of the episode's agent: each runs the
episode's model (a model of its own, from the same rung) with its own tool families, within
the episode's limits, which hold for the whole tree (``reactloop.subagents``).

The record is the tree's: ``model_calls``, ``tool_calls``, ``usage`` and so ``cost`` are the
root's ``RunResult``'s, which count every child's; ``called`` (and the task's ``must_call`` /
``must_not_call``) are the calls of every agent of the tree, read from the children's own
journals beside the episode's; and ``children`` lists each child as ``reactloop cost`` does
(``usage.children``), with its cost at the rung's prices and the tools it called.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop import Agent, Limits, Model, Tool, read_journal
from reactloop.errors import JournalError
from reactloop.eval.records.health import journal_stats
from reactloop.eval.tasks.toolset import episode_tools
from reactloop.usage.children import child_journal, child_usages

if TYPE_CHECKING:
    from reactloop.eval.tasks.tasks import Task

MAX_DEPTH = 8  # journals naming each other in a loop are not followed further


def sub_agent_tools(
    task: Task, workspace: Path | None, model: Callable[[], Model], limits: Limits
) -> list[Tool]:
    """The agent tools of ``task``'s sub-agents, each with a model of its own."""
    tools = []
    for sub in task.agents:
        own = episode_tools(dataclasses.replace(task, tools=sub.tools, agents=()), workspace)
        agent = Agent(model(), own, limits=limits, instructions=sub.instructions)
        tools.append(agent.as_tool(sub.name, sub.description))
    return tools


def tree_stats(
    stats: dict[str, Any], trace: Path, cost: Callable[[dict[str, int]], float | None]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``stats`` with the children's calls added to ``called`` and ``attempted``, and what
    the record says of the children (nothing for an agent without any)."""
    children = _children(trace, cost, depth=1)
    if not children:
        return stats, {}
    called = [*stats["called"], *(name for c in children for name in c["called"])]
    attempted = [*stats["attempted"], *(name for c in children for name in c["attempted"])]
    shown = [{k: v for k, v in c.items() if k != "attempted"} for c in children]
    return stats | {"called": called, "attempted": attempted}, {"children": shown}


def _children(
    trace: Path, cost: Callable[[dict[str, int]], float | None], depth: int
) -> list[dict[str, Any]]:
    """Each child of the journal at ``trace``, then its own children, depth first."""
    try:
        events = read_journal(trace)
    except (JournalError, OSError):
        return []  # the record says what the parent's journal says: its ``child_stop``s
    found = []
    for child in child_usages(events):
        record = child.to_dict()
        record["cost"] = cost(record["usage"])
        path = child_journal(child.trace, trace)
        record["trace"] = None if path is None else path.name  # beside the episode's
        stats = _stats(path)
        record["called"] = list(stats["called"]) if stats else []
        record["attempted"] = list(stats["attempted"]) if stats else []
        found.append(record)
        if path is not None and depth < MAX_DEPTH:
            found.extend(_children(path, cost, depth + 1))
    return found


def _stats(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        return journal_stats(read_journal(path))
    except (JournalError, OSError):
        return None
