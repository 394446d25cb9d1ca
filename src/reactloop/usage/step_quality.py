"""Count, from a journal, how well-formed a run's steps were and how much prefix was reused.

Works on journal records (``read_journal`` / ``iter_journal`` dicts) or on live ``Event``s, so
the same numbers come out of a finished trace and of an observer during a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reactloop.journal.events import Event

UNKNOWN_TOOL_PREFIX = "unknown tool "


@dataclass(kw_only=True)
class StepQuality:
    """Per-run counts. ``steps`` lists each model call's raw local statistics, when present."""

    turns: int = 0
    format_errors: int = 0
    unknown_tools: int = 0
    tool_calls: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, record: Mapping[str, Any]) -> None:
        kind = record.get("type")
        if kind == "turn":
            self.turns += 1
            turn = record.get("turn") or {}
            if turn.get("format_error"):
                self.format_errors += 1
        elif kind == "tool_result":
            self.tool_calls += 1
            error = (record.get("result") or {}).get("error") or ""
            if isinstance(error, str) and error.startswith(UNKNOWN_TOOL_PREFIX):
                self.unknown_tools += 1
        elif kind == "response" and isinstance(record.get("raw"), Mapping):
            raw = record["raw"]
            if "evaluated_tokens" in raw:
                self.steps.append(dict(raw))

    def __call__(self, event: Event) -> None:
        """Use as an observer: ``Agent(..., observers=[quality])``."""
        self.add({"type": event.type, **event.data})


def step_quality(records: Iterable[Mapping[str, Any]]) -> StepQuality:
    quality = StepQuality()
    for record in records:
        quality.add(record)
    return quality
