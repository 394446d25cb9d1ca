"""Events the loop emits as a run goes: the journal, the console and user hooks observe them.

Event types, in the order a run emits them: ``run_start``, then per step ``request``,
``response`` (the raw provider reply, when the adapter gives one), ``turn``, ``tool_call``,
``tool_start`` (written ahead of a call that runs) and ``tool_result`` for each call,
``warning`` (loop, wind-down, truncation, format error) as they happen, and one ``stop``. A
resumed run (``reactloop.resume``) appends a ``resume`` event, and its run goes on in the
same journal to the stop that ends it; ``approval`` records a person's decision on a call
that waits for one. Each event's ``data`` is plain JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from reactloop.errors import describe_exception

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
    """One event: immutable, and a tuple because the loop makes several every step."""

    type: str
    step: int
    data: dict[str, Any]


Observer = Callable[[Event], None]


def micros(seconds: float) -> float:
    """``seconds`` to the microsecond: ``round(seconds, 6)`` without its slow decimal path."""
    return round(seconds * 1_000_000) / 1_000_000


class Emitter:
    """Sends a run's events to its journal and its observers, and keeps its warnings.

    The journal must take every event: the first one it cannot take is kept in
    ``journal_error`` (the loop then ends the run with ``journal_error``), and later events
    are still offered to it. An observer that raises anything (``SystemExit`` and
    ``KeyboardInterrupt`` included) is dropped, with a warning.
    """

    def __init__(self, journal: Observer | None, observers: Sequence[Observer]) -> None:
        self.journal = journal
        self.observers = list(observers)
        self.observed = journal is not None or bool(self.observers)
        self.step = 0  # the run's current step, set by the loop: each event carries it
        self.warnings: list[str] = []
        self.warned_kinds: set[str] = set()  # of ``warn_once``
        self.journal_error: str | None = None

    def emit(self, event_type: str, /, **data: Any) -> None:
        event = Event(event_type, self.step, data)
        if self.journal is not None:
            try:
                self.journal(event)
            except BaseException as exc:  # the run ends at the next step, and says why
                self._journal_failed(event_type, exc)
        for observer in self.observers:
            try:
                observer(event)
            except BaseException as exc:  # SystemExit too: a broken observer is dropped
                self.observers = [o for o in self.observers if o is not observer]
                self.warnings.append(
                    f"observer_failed: {observer!r} raised {describe_exception(exc)}; dropped"
                )

    def warn(self, kind: str, message: str, **data: Any) -> None:
        self.warnings.append(f"{kind}: {message}")
        self.emit("warning", kind=kind, message=message, **data)

    def warn_once(self, kind: str, message: str) -> None:
        """``warn``, unless this run has warned of ``kind`` before (an adapter's notices)."""
        if kind not in self.warned_kinds:
            self.warned_kinds.add(kind)
            self.warn(kind, message)

    def _journal_failed(self, event_type: str, exc: BaseException) -> None:
        message = f"the journal could not write a {event_type} event: {describe_exception(exc)}"
        self.warnings.append(f"journal_failed: {message}")
        if self.journal_error is None:
            self.journal_error = message
