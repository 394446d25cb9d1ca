"""The sub-agents of a journal (``Agent.as_tool``): each child the run called, with its own
tokens and model calls, its descendants' included, as its ``child_stop`` event says.

A child's steps are in its own journal (``trace``); the parent's journal holds one
``child_start`` and one ``child_stop`` per child, so the parent's accounting adds the children
without reading their journals. A child with a ``child_start`` and no ``child_stop`` was cut
off with its parent (or given up on by it): its ``stop_reason`` is None and its tokens are not
known here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import ChildStartEvent, ChildStopEvent
from reactloop.messages import Usage
from reactloop.usage.steps import usage_from


@dataclass(frozen=True, kw_only=True)
class ChildUsage:
    agent_path: str
    tool: str = ""
    trace: str | None = None
    stop_reason: str | None = None
    forced: bool = False
    model_calls: int = 0
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_path": self.agent_path,
            "tool": self.tool,
            "trace": self.trace,
            "stop_reason": self.stop_reason,
            "forced": self.forced,
            "model_calls": self.model_calls,
            "usage": self.usage.to_dict(),
        }

    def describe(self) -> str:
        ended = self.stop_reason or "no child_stop: cut off, tokens unknown"
        if self.forced:
            ended += ", forced"
        usage = self.usage
        return (
            f"sub-agent {self.agent_path} ({ended}): {self.model_calls} model calls · "
            f"input {usage.input_tokens:,} · output {usage.output_tokens:,}"
        )


def child_usages(events: Records) -> list[ChildUsage]:
    """The children of the journal's runs, in the order they started."""
    children: dict[str, ChildUsage] = {}
    for event in readable_events(events):
        if isinstance(event, ChildStartEvent):
            path = event.agent_path
            children[path] = ChildUsage(agent_path=path, tool=event.tool, trace=event.trace)
        elif isinstance(event, ChildStopEvent):
            path = event.agent_path
            started = children.get(path, ChildUsage(agent_path=path))
            children[path] = ChildUsage(
                agent_path=path,
                tool=started.tool,
                trace=started.trace or event.trace,
                stop_reason=event.stop_reason or "?",
                forced=event.forced,
                model_calls=event.model_calls,
                usage=usage_from(event.usage),
            )
    return list(children.values())
