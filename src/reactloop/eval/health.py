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
from collections.abc import Iterable, Mapping
from typing import Any

from reactloop.journal.events import Event

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
_LOOP_KINDS = frozenset({"repeat", "pingpong", "cycle"})
_BAD_ARGUMENTS = ("invalid arguments", "arguments are ", "arguments must be ")


class HealthTally:
    """``journal_stats`` counted as the run goes: an observer of its events
    (``Agent(..., observers=[tally])``), so that an episode's record needs no read-back of its
    journal. A step's seconds are timed by the tally's own clock, from its ``request`` to its
    ``turn``, as the journal times them. ``add`` takes a journal record instead (a dict with
    ``type``, ``step`` and ``t``)."""

    def __init__(self) -> None:
        self.health = dict.fromkeys(HEALTH_COUNTS, 0)
        self.steps: list[dict[str, Any]] = []
        self.called: list[str] = []
        self.attempted: list[str] = []
        self.server_model: str | None = None
        self._requested_at: dict[int, float] = {}
        self._started = time.monotonic()

    def __call__(self, event: Event) -> None:
        self._count(event.type, event.step, time.monotonic() - self._started, event.data)

    def add(self, record: Mapping[str, Any]) -> None:
        step, t = int(record.get("step", 0)), float(record.get("t", 0.0))
        self._count(str(record.get("type")), step, t, record)

    def _count(self, kind: str, step: int, t: float, data: Mapping[str, Any]) -> None:
        if kind == "request":
            self._requested_at[step] = t
        elif kind == "turn":
            turn = data.get("turn") or {}
            self.steps.append(_step(step, t, turn, self._requested_at))
            _count_turn(self.health, turn)
        elif kind == "tool_call":
            self.health["tool_calls"] += 1
            self.attempted.append(str((data.get("call") or {}).get("name", "")))
        elif kind == "tool_result":
            _count_result(self.health, self.called, data.get("result") or {})
        elif kind == "warning":
            _count_warning(self.health, str(data.get("kind", "")))
        elif kind == "response" and self.server_model is None:
            self.server_model = _reported_model(data.get("raw"))

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


def journal_stats(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``HealthTally.stats`` of a journal's records (``read_journal``)."""
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


def _count_warning(health: dict[str, int], kind: str) -> None:
    if kind in _LOOP_KINDS:
        health["loop_refused"] += 1
    elif kind in ("format_error", "empty_reply"):
        health["format_errors"] += 1
    elif kind == "wind_down":
        health["wind_downs"] += 1


def _reported_model(raw: Any) -> str | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("model"), str):
        return str(raw["model"])
    return None
