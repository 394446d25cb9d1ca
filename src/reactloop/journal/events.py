"""Events the loop emits as a run goes: the journal, the console and user hooks observe them.

The loop makes each as a typed value (``schema.py``) and sends it through the run's
``Emitter`` (``emitter.py``); an observer gets it as an ``Event``: its type, its step, and its
fields as plain JSON (``data``).

Event types, in the order a run emits them: ``run_start``, then per step ``request``,
``response`` (the raw provider reply, when the adapter gives one), ``turn``, ``tool_call``,
``tool_start`` (written ahead of a call that runs) and ``tool_result`` for each call,
``warning`` (loop, wind-down, truncation, format error) as they happen, and one ``stop``. A
resumed run (``reactloop.resume``) appends a ``resume`` event, and its run goes on in the
same journal to the stop that ends it; ``approval`` records a person's decision on a call
that waits for one. Each event's ``data`` is plain JSON.
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
    "tool_start",
    "tool_search",
    "skill_activation",
    "elicitation",
    "tool_result",
    "warning",
    "compaction",
    "check",
    "budget_notice",
    "stop",
    "resume",
    "approval",
    "child_start",
    "child_stop",
)


# What the model is told after a ``truncated`` warning, whose message says less: the fold
# (``fold.py``) places it where the loop did (``loop/notices.py`` says it). Kept here, which
# ``import reactloop`` loads anyway, rather than beside ``WarningKind``, which it does not.
TRUNCATED_NOTICE = (
    "Your reply was cut off at the output limit and nothing in it was run. Reply again, shorter."
)


class Event(NamedTuple):
    """One event: immutable, and a tuple because the loop makes several every step. Its
    ``data`` is read, never changed: the journal and every observer get the same dict (of an
    event made in code, the typed event's own: ``Emitter.emit``)."""

    type: str
    step: int
    data: dict[str, Any]


Observer = Callable[[Event], None]


def micros(seconds: float) -> float:
    """``seconds`` to the microsecond: ``round(seconds, 6)`` without its slow decimal path."""
    return round(seconds * 1_000_000) / 1_000_000
