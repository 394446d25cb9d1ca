"""What a replay will do, said before it does it: the calls with side effects it runs again,
the ones it will not run again, and where.

A call the recorded run was cancelled in (Ctrl-C during a 30 s command) or before is not run
again: the replay is cancelled at that call, as the recorded run was, so its results match
(``compare`` takes two cancellations as the same result). A run cancelled during a model call
(whose reply was never recorded) is cancelled where that call would begin (``CancelPoints``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.schema import (
    StopEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import StopReason
from reactloop.replay.compare import is_cancellation
from reactloop.replay.workspace import ReplaySite
from reactloop.tools.base import Tool

MAX_SHOWN = 120


@dataclass(frozen=True)
class PlannedCall:
    step: int
    tool: str
    arguments: str

    def describe(self) -> str:
        arguments = self.arguments.strip()
        if len(arguments) > MAX_SHOWN:
            arguments = arguments[: MAX_SHOWN - 1] + "…"
        return f"step {self.step}: {self.tool} {arguments}"


@dataclass(frozen=True, kw_only=True)
class ReplayPlan:
    """``site`` is None when the caller gave the tools (the replay does not choose where)."""

    site: ReplaySite | None
    will_run: tuple[PlannedCall, ...]
    not_again: tuple[PlannedCall, ...]

    def describe(self) -> str:
        lines = [self.site.describe()] if self.site is not None else []
        if self.will_run:
            lines.append(f"runs {len(self.will_run)} call(s) with side effects again:")
            lines.extend(f"  {call.describe()}" for call in self.will_run)
        else:
            lines.append("runs no call with side effects")
        if self.not_again:
            lines.append("does not run again what the recorded run was cancelled in or before:")
            lines.extend(f"  {call.describe()}" for call in self.not_again)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        site = self.site
        return {
            "workspace": str(site.path) if site is not None and site.path else None,
            "workspace_is": site.how if site is not None else "given tools",
            "will_run": [vars(call) for call in self.will_run],
            "not_again": [vars(call) for call in self.not_again],
        }


def plan(
    events: Sequence[JournalEvent], tools: Iterable[Tool], site: ReplaySite | None
) -> ReplayPlan:
    writers = {tool.name for tool in tools if not tool.read_only}
    declined = declined_calls(events)
    cancelled = cancelled_calls(events)
    will_run, not_again = [], []
    for event in events:
        if not isinstance(event, ToolCallEvent):
            continue
        call = event.call
        call_id, name = str(call.get("id")), str(call.get("name"))
        planned = PlannedCall(event.step, name, str(call.get("arguments") or ""))
        if call_id in cancelled:
            not_again.append(planned)
        elif name in writers and call_id not in declined:
            will_run.append(planned)
    return ReplayPlan(site=site, will_run=tuple(will_run), not_again=tuple(not_again))


@dataclass(frozen=True)
class CancelPoints:
    """Where the recorded run was cancelled: at these ``calls``, or ``after`` (turns, tool
    results) in the model call that would come next."""

    calls: frozenset[str]
    after: tuple[int, int] | None

    def reached(self, turns: int, results: int) -> bool:
        return self.after is not None and (turns, results) == self.after


@dataclass
class CancelWatch:
    """The replay's events as they come, against where the recorded run was cancelled:
    ``turns`` replayed, and the tool ``results`` since the last one."""

    points: CancelPoints
    turns: int = 0
    results: int = 0

    def at(self, event: JournalEvent) -> bool:
        """Whether the replay, at ``event``, is where the recorded run was cancelled."""
        if isinstance(event, ToolCallEvent):
            return str(event.call.get("id")) in self.points.calls
        if isinstance(event, TurnEvent):
            self.turns, self.results = self.turns + 1, 0
        elif isinstance(event, ToolResultEvent):
            self.results += 1
        return self.points.reached(self.turns, self.results)


def cancel_points(events: Sequence[JournalEvent]) -> CancelPoints:
    calls = frozenset(cancelled_calls(events))
    stop = next((e for e in reversed(events) if isinstance(e, StopEvent)), None)
    if calls or stop is None or stop.stop_reason != StopReason.CANCELLED:
        return CancelPoints(calls, None)
    turns = [i for i, e in enumerate(events) if isinstance(e, TurnEvent)]
    since = events[turns[-1] :] if turns else events
    results = sum(isinstance(e, ToolResultEvent) for e in since)
    return CancelPoints(calls, (len(turns), results))


def declined_calls(events: Iterable[JournalEvent]) -> dict[str, str]:
    """The calls the recorded run's approver declined, with its reasons."""
    return {
        str(e.call_id): e.message
        for e in events
        if isinstance(e, WarningEvent) and e.kind == WarningKind.DECLINED
    }


def unrun_calls(events: Iterable[JournalEvent]) -> set[str]:
    """The calls the recorded run never ran nor answered (left waiting for an approval that
    never came): a replay does not run them either, whatever the journal says of them."""
    asked, answered = set(), set()
    for event in events:
        if isinstance(event, ToolCallEvent):
            asked.add(str(event.call.get("id")))
        elif isinstance(event, ToolResultEvent):
            answered.add(str(event.result.get("call_id")))
    return asked - answered


def cancelled_calls(events: Iterable[JournalEvent]) -> set[str]:
    """The calls whose recorded result says the run was cancelled during or before them."""
    return {
        str(e.result.get("call_id"))
        for e in events
        if isinstance(e, ToolResultEvent) and is_cancellation(e.result.get("error"))
    }
