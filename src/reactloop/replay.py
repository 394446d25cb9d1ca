"""Replay a journal: re-drive the loop with the recorded model turns against the real tools.

The model's side is fixed (``ReplayModel`` plays the journal's turns); the tools run for real.
``replay`` reports ``identical`` or the first divergence: the step, the tool, the arguments,
and what the tool returned then and now. A replay after a tool changed shows what changed.

    report = replay("runs/run.jsonl")
    print(report.describe())
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.agent import Agent
from reactloop.events import Event
from reactloop.journal import open_journal, read_journal
from reactloop.messages import ToolCall
from reactloop.models.replay import ReplayModel, turns_from_events
from reactloop.replay_setup import (
    limit_notes,
    limits_from,
    object_or_empty,
    run_start_of,
    tools_from_config,
)
from reactloop.result import RunResult
from reactloop.tools.base import Tool
from reactloop.usage import step_of

# Keys of a tool result's JSON that depend on where a run spilled output, not on the tool.
_UNSTABLE_CONTENT_KEYS = ("full_output",)


@dataclass(frozen=True, kw_only=True)
class Divergence:
    """The first place where the replay did not do what the recorded run did.

    ``kind``: ``tool_result`` (a tool returned something else), ``missing_result`` (the
    recorded run had more tool results), ``extra_result`` (the replay had more), ``stop``
    (same tool results, but the run ended differently).
    """

    kind: str
    step: int
    tool: str | None = None
    arguments: str | None = None
    expected: Any = None
    actual: Any = None

    def describe(self) -> str:
        where = f"step {self.step}" + (f", tool {self.tool}" if self.tool else "")
        lines = [f"diverged at {where} ({self.kind})"]
        if self.arguments is not None:
            lines.append(f"  arguments: {self.arguments}")
        lines.append(f"  expected:  {_show(self.expected)}")
        lines.append(f"  actual:    {_show(self.actual)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


def compare(
    recorded: Sequence[Mapping[str, Any]], replayed: Sequence[Mapping[str, Any]]
) -> tuple[Divergence | None, int]:
    """The first divergence between two runs' events, and how many tool results matched.

    A recorded run without a ``stop`` event was interrupted: the replay may go further.
    """
    old = _tool_results(recorded)
    new = _tool_results(replayed)
    for count, (before, after) in enumerate(zip(old, new, strict=False)):
        if _comparable(before) != _comparable(after):
            return _result_divergence(before, after), count
    interrupted = not any(e.get("type") == "stop" for e in recorded)
    matched = min(len(old), len(new))
    if len(old) > matched:
        return _unmatched("missing_result", old[matched], recorded_side=True), matched
    if len(new) > matched and not interrupted:
        return _unmatched("extra_result", new[matched], recorded_side=False), matched
    return _stop_divergence(recorded, replayed), matched


def _unmatched(kind: str, item: Mapping[str, Any], *, recorded_side: bool) -> Divergence:
    content = item["content"]
    return Divergence(
        kind=kind,
        step=item["step"],
        tool=item["tool"],
        arguments=item["arguments"],
        expected=content if recorded_side else None,
        actual=None if recorded_side else content,
    )


def _tool_results(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    arguments: dict[str, str] = {}
    results = []
    for event in events:
        if event.get("type") == "tool_call":
            call = _mapping(event.get("call"))
            arguments[str(call.get("id"))] = str(call.get("arguments") or "")
        elif event.get("type") == "tool_result":
            result = _mapping(event.get("result"))
            call_id = str(result.get("call_id"))
            results.append(
                {
                    "step": step_of(event),
                    "tool": str(result.get("name") or ""),
                    "call_id": call_id,
                    "arguments": arguments.get(call_id, ""),
                    "content": _content_value(event),
                }
            )
    return results


def _content_value(event: Mapping[str, Any]) -> Any:
    text = event.get("content")
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in _UNSTABLE_CONTENT_KEYS}
    return value


def _comparable(item: Mapping[str, Any]) -> tuple[Any, ...]:
    return item["tool"], item["arguments"], json.dumps(item["content"], sort_keys=True, default=str)


def _result_divergence(before: Mapping[str, Any], after: Mapping[str, Any]) -> Divergence:
    return Divergence(
        kind="tool_result",
        step=before["step"],
        tool=before["tool"]
        if before["tool"] == after["tool"]
        else f"{before['tool']} → {after['tool']}",
        arguments=before["arguments"],
        expected=before["content"],
        actual=after["content"],
    )


def _stop_divergence(
    recorded: Sequence[Mapping[str, Any]], replayed: Sequence[Mapping[str, Any]]
) -> Divergence | None:
    old = next((e for e in reversed(recorded) if e.get("type") == "stop"), None)
    new = next((e for e in reversed(replayed) if e.get("type") == "stop"), None)
    if old is None or new is None:
        return None
    keys = ("stop_reason", "answer")
    expected = {k: old.get(k) for k in keys}
    actual = {k: new.get(k) for k in keys}
    if expected == actual:
        return None
    return Divergence(kind="stop", step=int(new.get("step") or 0), expected=expected, actual=actual)


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


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
