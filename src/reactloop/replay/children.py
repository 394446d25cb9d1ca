"""Replaying a run whose tools include sub-agents (``Agent.as_tool``): each child is replayed
from its own journal, never run live.

The parent's journal names each child in a ``child_start``: the ``call_id`` of the call that
ran it, its ``tool``, ``task`` and ``trace`` (the child's journal). In place of each agent tool
the replay puts one that, for a call, finds the child the recorded call ran and replays that
child's journal: its recorded turns against its tools (those of the agent behind the agent
tool the caller gave, ``subagents.agent_of``; else rebuilt from the child's ``run_start``), a
grandchild again from its own. The replayed child runs as a child of the replaying parent
(``subagents.run_child``): its spending counts in its ancestors' budgets as the recorded
child's did, so it winds down where that one did (parallel siblings that share a tight budget
may find it spent in another order than they did then: their timing decides, here as there).
The observation is made from the replayed child's result as ``as_tool`` makes it, so the
parent's comparison sees the child's answer; the child's own report is one of the parent's
``children``. A child whose journal was not a file (its parent
journaled in memory) or cannot be found is not replayed: its recorded observation is.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import ToolError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.schema import ChildStartEvent, ToolResultEvent
from reactloop.loop.tree_budget import current_run
from reactloop.replay.report import ReplayReport
from reactloop.subagent_reach import agent_of
from reactloop.subagents import observation, run_child
from reactloop.tools.base import Tool
from reactloop.tools.context import current_call_id
from reactloop.usage.children import child_journal

if TYPE_CHECKING:
    from reactloop.agent import Agent
    from reactloop.result import RunResult

ReplayOne = Callable[..., ReplayReport]  # ``replay(trace, tools=...)``
_REPLAYING: ContextVar[str | None] = ContextVar("reactloop_replaying_child", default=None)
_ANY_DEPTH = 1_000  # the recorded tree kept to its depth limit; its replay is not judged again


def run_replay(agent: Agent, task: str) -> RunResult | None:
    """The replaying ``agent`` run as a child of the replaying parent, when it replays a child
    (so its spending counts in its ancestors' budgets as the recorded child's did, and its
    own children's in its); None for the replayed root, which ``replay`` runs itself."""
    name = _REPLAYING.get()
    if name is None or current_run() is None:
        return None
    return run_child(agent, name, task, _ANY_DEPTH)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ChildRecord:
    agent_path: str
    tool: str
    task: str
    call_id: str | None
    trace: Path | None


def recorded_children(events: Iterable[JournalEvent], journal: Path) -> list[ChildRecord]:
    """The children a journal's run started, in order; a relative or moved ``trace`` is looked
    for beside ``journal`` (the children's journals travel with their parent's)."""
    return [
        ChildRecord(
            agent_path=event.agent_path,
            tool=event.tool,
            task=event.task,
            call_id=event.call_id,
            trace=child_journal(event.trace, journal),
        )
        for event in events
        if isinstance(event, ChildStartEvent)
    ]


class ChildReplays:
    """The agent tools of one replayed run, each replaying the recorded children."""

    def __init__(
        self,
        events: Sequence[JournalEvent],
        journal: Path,
        given: Iterable[Tool] | None,
        replay_one: ReplayOne,
    ) -> None:
        self.records = recorded_children(events, journal)
        self.given = {t.name: t for t in given or ()}
        self.replay_one = replay_one
        self.results = _recorded_results(events)
        self.reports: list[ReplayReport] = []
        self._lock = threading.Lock()
        self._taken: set[int] = set()

    def in_place_of(self, tools: list[Tool], specs: Any) -> list[Tool]:
        """``tools`` with each agent tool the run called replaced by its replaying one (added,
        from the recorded schema, ``run_start``'s ``tools``, when the caller's tools lack it)."""
        names = {record.tool for record in self.records}
        replaced = [self._replaying(t) if t.name in names else t for t in tools]
        present = {t.name for t in tools}
        for spec in specs if isinstance(specs, list) else []:
            if isinstance(spec, Mapping) and spec.get("name") in names - present:
                replaced.append(self._from_spec(spec))
        return replaced

    def added_to(self, report: ReplayReport) -> ReplayReport:
        children = tuple(sorted(self.reports, key=lambda r: r.agent_path))
        same = report.identical and all(child.identical for child in children)
        return dataclasses.replace(report, children=children, identical=same)

    def _replaying(self, tool: Tool) -> Tool:
        def function(**values: Any) -> Any:
            return self.replay_call(tool.name, values)

        return dataclasses.replace(tool, function=function, bounded=True)

    def _from_spec(self, spec: Mapping[str, Any]) -> Tool:
        name = str(spec.get("name"))
        schema = spec.get("parameters")

        def function(**values: Any) -> Any:
            return self.replay_call(name, values)

        return Tool.from_schema(
            name,
            str(spec.get("description") or ""),
            dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            function,
            bounded=True,
            strict=False,
        )

    def replay_call(self, name: str, values: Mapping[str, Any]) -> Any:
        """The observation of one call of an agent tool: its recorded child, replayed."""
        record = self._take(name, current_call_id(), values.get("task"))
        if record is None:
            raise ToolError(f"not replayed: the recorded run has no sub-agent for this {name} call")
        if record.trace is None:
            return self._recorded_observation(record)
        agent = agent_of(self.given[name]) if name in self.given else None
        tools = None if agent is None else _tools_of(agent.toolbox)
        token = _REPLAYING.set(name)
        try:
            report = self.replay_one(record.trace, tools=tools)
        finally:
            _REPLAYING.reset(token)
        report = dataclasses.replace(report, agent_path=record.agent_path)
        with self._lock:
            self.reports.append(report)
        if report.result is None:
            raise ToolError(f"{name}: the sub-agent's replay has no result")
        return observation(name, report.result)

    def _take(self, name: str, call_id: str | None, task: Any) -> ChildRecord | None:
        """The record of this call: by its call id, else the first unused one of the same
        tool (and task, when one has it): journals written before ``call_id`` was recorded."""
        with self._lock:
            numbered = list(enumerate(self.records))
            untaken = [(i, r) for i, r in numbered if i not in self._taken and r.tool == name]
            chosen = next(((i, r) for i, r in untaken if call_id and r.call_id == call_id), None)
            if chosen is None and not any(r.call_id for _, r in untaken):
                chosen = next(((i, r) for i, r in untaken if r.task == task), None)
                chosen = chosen or next(iter(untaken), None)
            if chosen is None:
                return None
            self._taken.add(chosen[0])
            return chosen[1]

    def _recorded_observation(self, record: ChildRecord) -> Any:
        result = self.results.get(record.call_id or "")
        if result is None:
            raise ToolError(f"not replayed: {record.agent_path} has no journal of its own")
        if result.get("ok"):
            return result.get("output")
        raise ToolError(str(result.get("error") or "the recorded call failed"))


def _tools_of(toolbox: Any) -> list[Tool]:
    found = (toolbox.get(name) for name in toolbox.names)
    return [tool for tool in found if tool is not None]


def _recorded_results(events: Iterable[JournalEvent]) -> dict[str, Mapping[str, Any]]:
    return {
        str(event.result.get("call_id")): event.result
        for event in events
        if isinstance(event, ToolResultEvent)
    }
