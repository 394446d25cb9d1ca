"""Events the loop emits as a run goes: the journal, the console and user hooks observe them.

Event types, in the order a run emits them: ``run_start``, then per step ``request``,
``response`` (the raw provider reply, when the adapter gives one), ``turn``, ``tool_call`` and
``tool_result`` for each call, ``warning`` (loop, wind-down, truncation, format error) as they
happen, and one ``stop``. Each event's ``data`` is plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True, kw_only=True, slots=True)
class Event:
    type: str
    step: int
    data: dict[str, Any] = field(default_factory=dict)


Observer = Callable[[Event], None]
