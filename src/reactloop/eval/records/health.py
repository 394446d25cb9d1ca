"""Protocol health of one episode, counted from its events (docs/journal.md): as the run
emits them (``HealthTally``, an observer) or from its journal (``journal_stats``).

Counts per episode; ``summary`` turns their sums into rates. Denominators: ``tool_calls``
(every call the model asked for) for invalid arguments, unknown tools and loop-guard
refusals; ``turns`` (model calls that returned) for format errors (unreadable or empty
replies), truncations (replies cut at the output limit) and parallel-call turns; episodes for
loop stops and wind-downs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event
from reactloop.journal.reader import Records, event_of, readable_events
from reactloop.journal.schema import (
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.journal.warning_kinds import WarningKind

HEALTH_COUNTS = (
    "turns",
    "tool_calls",
    "invalid_arguments",
    "unknown_tools",
    "loop_refused",
    "format_errors",
    "truncations",
    "parallel_turns",
    "wind_downs",
)
_LOOP_KINDS = frozenset({WarningKind.REPEAT, WarningKind.PINGPONG, WarningKind.CYCLE})
_FORMAT_KINDS = frozenset({WarningKind.FORMAT_ERROR, WarningKind.EMPTY_REPLY})
_BAD_ARGUMENTS = ("invalid arguments", "arguments are ", "arguments must be ")


class HealthTally:
    """``journal_stats`` counted as the run goes: an observer of its events
    (``Agent(..., observers=[tally])``), so that an episode's record needs no read-back of its
    journal. A step's seconds are timed by the tally's own clock, from its ``request`` to its
    ``turn``, as the journal times them. ``add`` takes a journal's event instead (typed, or
    its line: a dict with ``type``, ``step`` and ``t``), timed by its ``t``."""

    def __init__(self) -> None:
        self.health = dict.fromkeys(HEALTH_COUNTS, 0)
        self.steps: list[dict[str, Any]] = []
        self.called: list[str] = []
        self.attempted: list[str] = []
        self.server_model: str | None = None
        self._requested_at: dict[int, float] = {}
        self._started = time.monotonic()

    def __call__(self, event: Event) -> None:
        typed = event_of(event)
        if typed is not None:
            self._count(typed, time.monotonic() - self._started)

    def add(self, record: Mapping[str, Any] | JournalEvent) -> None:
        for event in readable_events((record,)):
            self._count(event, event.t or 0.0)

    def _count(self, event: JournalEvent, t: float) -> None:
        if isinstance(event, RequestEvent):
            self._requested_at[event.step] = t
        elif isinstance(event, TurnEvent):
            self.steps.append(_step(event.step, t, event.turn, self._requested_at))
            _count_turn(self.health, event.turn)
        elif isinstance(event, ToolCallEvent):
            self.health["tool_calls"] += 1
            self.attempted.append(str(event.call.get("name", "")))
        elif isinstance(event, ToolResultEvent):
            _count_result(self.health, self.called, event.result)
        elif isinstance(event, WarningEvent):
            _count_warning(self.health, event)
        elif isinstance(event, ResponseEvent) and self.server_model is None:
            self.server_model = _reported_model(event.raw)

    def stats(self) -> dict[str, Any]:
        """``health`` (counts), ``steps`` (per model call: input, cached, output tokens and
        seconds), ``called`` (tools that ran and succeeded), ``attempted`` (every tool asked
        for) and ``server_model`` (the model name the provider reported, when it did)."""
        return {
            "health": dict(self.health),
            "steps": list(self.steps),
            "called": list(self.called),
            "attempted": list(self.attempted),
            "server_model": self.server_model,
        }


def journal_stats(events: Records) -> dict[str, Any]:
    """``HealthTally.stats`` of a journal's events (typed, or its lines: ``read_journal``)."""
    tally = HealthTally()
    for event in events:
        tally.add(event)
    return tally.stats()


def _step(
    step: int, t: float, turn: Mapping[str, Any], requested_at: dict[int, float]
) -> dict[str, Any]:
    usage = turn.get("usage") or {}
    started = requested_at.get(step)
    seconds = t - started if started is not None else None
    return {
        "step": step,
        "input_tokens": int(usage.get("input_tokens") or 0),
        "cached_tokens": int(usage.get("cached_tokens") or 0),
        "output_tokens": int(usage.get("output_tokens") or 0),
        "seconds": round(seconds, 6) if seconds is not None else None,
    }


def _count_turn(health: dict[str, int], turn: Mapping[str, Any]) -> None:
    health["turns"] += 1
    if turn.get("finish_reason") == "length":
        health["truncations"] += 1
    if len(turn.get("tool_calls") or ()) > 1:
        health["parallel_turns"] += 1


def _count_result(health: dict[str, int], called: list[str], result: Mapping[str, Any]) -> None:
    error = str(result.get("error") or "")
    if result.get("ok"):
        called.append(str(result.get("name", "")))
    elif error.startswith("unknown tool"):
        health["unknown_tools"] += 1
    elif error.startswith(_BAD_ARGUMENTS):
        health["invalid_arguments"] += 1


def _count_warning(health: dict[str, int], warning: WarningEvent) -> None:
    if warning.kind in _LOOP_KINDS:
        health["loop_refused"] += 1
    elif warning.kind in _FORMAT_KINDS:
        health["format_errors"] += 1
    elif warning.kind == WarningKind.WIND_DOWN:
        health["wind_downs"] += 1


def _reported_model(raw: Any) -> str | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("model"), str):
        return str(raw["model"])
    return None
