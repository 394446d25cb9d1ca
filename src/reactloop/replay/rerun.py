"""Replay a journal: re-drive the loop with the recorded model turns against the real tools.

The model's side is fixed (``ReplayModel`` plays the journal's turns); the tools run for real.
``replay`` reports ``identical`` or the first divergence: the step, the tool, the arguments,
and what the tool returned then and now. A replay after a tool changed shows what changed.

    report = replay("runs/run.jsonl")
    print(report.describe())
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.agent import Agent
from reactloop.events import Event
from reactloop.journal import open_journal, read_journal
from reactloop.messages import ToolCall
from reactloop.replay.compare import Divergence, compare
from reactloop.replay.model import ReplayModel, turns_from_events
from reactloop.replay.rebuild import (
    limit_notes,
    limits_from,
    object_or_empty,
    run_start_of,
    tools_from_config,
)
from reactloop.result import RunResult
from reactloop.tools.base import Tool


@dataclass(frozen=True, kw_only=True)
class ReplayReport:
    trace: str
    identical: bool
    compared: int
    divergence: Divergence | None = None
    result: RunResult | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        lines = [f"identical ({self.compared} tool results compared)"] if self.identical else []
        if self.divergence is not None:
            lines.append(self.divergence.describe())
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "identical": self.identical,
            "compared": self.compared,
            "divergence": self.divergence.to_dict() if self.divergence else None,
            "stop_reason": str(self.result.stop_reason) if self.result else None,
            "answer": self.result.answer if self.result else None,
            "notes": list(self.notes),
        }


def replay(
    trace_path: str | Path,
    *,
    tools: Iterable[Tool] | None = None,
    journal: str | Path | None = None,
) -> ReplayReport:
    """Re-run a journal's turns against ``tools`` (default: rebuilt from the run's config).

    ``journal`` names a file for the replay's own journal. Raises ``JournalError`` when the
    trace cannot be read and ``UsageError`` when it cannot be replayed (no ``run_start``).
    """
    path = Path(trace_path)
    recorded = read_journal(path)
    start = run_start_of(recorded, path)
    config = object_or_empty(start, "config")
    recorded_limits = object_or_empty(start, "limits")
    tool_list = list(tools) if tools is not None else tools_from_config(config)
    model = ReplayModel(turns_from_events(recorded, path), name=str(start.get("model") or "replay"))
    replayed: list[dict[str, Any]] = []
    writer = open_journal(journal) if journal is not None else None
    try:
        agent = Agent(
            model,
            tool_list,
            limits=limits_from(recorded_limits),
            journal=writer,
            observers=(lambda event: replayed.append(_as_record(event)),),
            instructions=start.get("instructions"),
            protocol="native",
            approve=_recorded_approvals(recorded),
            config=dict(config),
        )
        result = agent.run(str(start.get("task") or ""))
    finally:
        if writer is not None:
            writer.close()
    divergence, compared = compare(recorded, replayed)
    notes = _tool_notes(start, tool_list) + limit_notes(recorded_limits)
    if not any(e.get("type") == "stop" for e in recorded):
        notes.append(
            "the recorded run has no stop event (it was interrupted); compared up to its end"
        )
    return ReplayReport(
        trace=str(path),
        identical=divergence is None,
        compared=compared,
        divergence=divergence,
        result=result,
        notes=tuple(notes),
    )


def _recorded_approvals(events: Sequence[Mapping[str, Any]]) -> Any:
    """An approver that declines exactly the calls the recorded run declined, with its reasons."""
    declined = {
        str(e.get("call_id")): str(e.get("message") or "")
        for e in events
        if e.get("type") == "warning" and e.get("kind") == "declined"
    }

    def approve(call: ToolCall, tool: Tool) -> bool | str:
        return declined.get(call.id, True)

    return approve


def _tool_notes(start: Mapping[str, Any], tools: Sequence[Tool]) -> list[str]:
    specs = start.get("tools")
    specs = specs if isinstance(specs, list) else []
    recorded = {str(t.get("name")) for t in specs if isinstance(t, Mapping)}
    present = {t.name for t in tools}
    notes = [
        f"tool {name!r} was in the recorded run but is not in the replay"
        for name in sorted(recorded - present)
    ]
    notes += [
        f"tool {name!r} is in the replay but was not in the recorded run"
        for name in sorted(present - recorded)
    ]
    return notes


def _as_record(event: Event) -> dict[str, Any]:
    return {"type": event.type, "step": event.step, **event.data}
