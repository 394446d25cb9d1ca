"""Count, from a journal, how well-formed a run's steps were and how much prefix was reused.

Works on a journal's events (typed, or ``read_journal`` / ``iter_journal`` dicts) or on live
``Event``s, so the same numbers come out of a finished trace and of an observer during a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event
from reactloop.journal.reader import Records, event_of, readable_events
from reactloop.journal.schema import ResponseEvent, ToolResultEvent, TurnEvent

UNKNOWN_TOOL_PREFIX = "unknown tool "


@dataclass(kw_only=True)
class StepQuality:
    """Per-run counts. ``steps`` lists each model call's raw local statistics, when present."""

    turns: int = 0
    format_errors: int = 0
    unknown_tools: int = 0
    tool_calls: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, record: Mapping[str, Any] | JournalEvent) -> None:
        for event in readable_events((record,)):
            self._count(event)

    def _count(self, event: JournalEvent) -> None:
        if isinstance(event, TurnEvent):
            self.turns += 1
            if event.turn.get("format_error"):
                self.format_errors += 1
        elif isinstance(event, ToolResultEvent):
            self.tool_calls += 1
            error = event.result.get("error") or ""
            if isinstance(error, str) and error.startswith(UNKNOWN_TOOL_PREFIX):
                self.unknown_tools += 1
        elif isinstance(event, ResponseEvent) and _local_statistics(event.raw):
            self.steps.append(dict(event.raw))

    def __call__(self, event: Event) -> None:
        """Use as an observer: ``Agent(..., observers=[quality])``."""
        typed = event_of(event)
        if typed is not None:
            self._count(typed)


def _local_statistics(raw: Any) -> bool:
    return isinstance(raw, Mapping) and "evaluated_tokens" in raw


def step_quality(records: Records) -> StepQuality:
    quality = StepQuality()
    for event in readable_events(records):
        quality._count(event)
    return quality
