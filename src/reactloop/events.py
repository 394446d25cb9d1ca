"""Events the loop emits as a run goes: the journal, the console and user hooks observe them.

Event types, in the order a run emits them: ``run_start``, then per step ``request``,
``response`` (the raw provider reply, when the adapter gives one), ``turn``, ``tool_call`` and
``tool_result`` for each call, ``warning`` (loop, wind-down, truncation, format error) as they
happen, and one ``stop``. Each event's ``data`` is plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

EVENT_TYPES = (
    "run_start",
    "request",
    "response",
    "turn",
    "tool_call",
    "tool_result",
    "warning",
    "stop",
)


class Event(NamedTuple):
    """One event: immutable, and a tuple because the loop makes several every step."""

    type: str
    step: int
    data: dict[str, Any]


Observer = Callable[[Event], None]


def micros(seconds: float) -> float:
    """``seconds`` to the microsecond: ``round(seconds, 6)`` without its slow decimal path."""
    return round(seconds * 1_000_000) / 1_000_000
