"""``Emitter``: where the loop sends a run's events, made as typed values (``schema.py``).

Each part of the loop makes its event as the value of its type (``ToolResultEvent(result=...,
content=...)``) and hands it to ``emit``; the emitter stamps it with the run's step and sends
the journal and the other observers the ``Event`` they take (``events.py``), its ``data`` the
event's own fields in its line's order (``JournalEvent.data``). A run nobody observes
(``observed`` False) sends nothing, and the loop makes no event for it (each place that makes
one every step asks ``observed`` first). ``warn`` keeps the run's warnings and sends each as a
``warning`` event of its ``WarningKind``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reactloop.errors import describe_exception
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event, Observer
from reactloop.journal.schema import WarningEvent
from reactloop.journal.warning_kinds import WarningKind

_new_tuple = tuple.__new__


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

    def emit(self, event: JournalEvent) -> None:
        """Send ``event``, at the run's current step, to the journal and the observers.

        The event is made only to be sent: one given exactly its line's fields, in their order
        (``LINE``: ``event_init.py``), sends its instance dict as the ``data``; any other (an
        optional field given, a default left out, ``step`` given, an enum) its ``data()``."""
        kind = type(event)
        own = event.__dict__
        data = own if [*own] == kind.LINE else event.data()
        sent = _new_tuple(Event, (kind.TYPE, self.step, data))  # Event(...) without its __new__
        if self.journal is not None:
            try:
                self.journal(sent)
            except BaseException as exc:  # the run ends at the next step, and says why
                self._journal_failed(event.TYPE, exc)
        for observer in self.observers:
            try:
                observer(sent)
            except BaseException as exc:  # SystemExit too: a broken observer is dropped
                self.observers = [o for o in self.observers if o is not observer]
                self.warnings.append(
                    f"observer_failed: {observer!r} raised {describe_exception(exc)}; dropped"
                )

    def warn(self, kind: WarningKind, message: str, **fields: Any) -> None:
        """A warning of the run (``RunResult.warnings``) and its ``warning`` event; ``fields``
        are ``WarningEvent``'s others (``call_id``, ``count``...)."""
        self._warn(kind, message, fields)

    def warn_once(self, kind: WarningKind | str, message: str) -> None:
        """``warn``, unless this run has warned of ``kind`` before (an adapter's notices,
        whose kinds are the adapter's own)."""
        if kind not in self.warned_kinds:
            self.warned_kinds.add(kind)
            self._warn(kind, message, {})

    def _warn(self, kind: WarningKind | str, message: str, fields: dict[str, Any]) -> None:
        self.warnings.append(f"{kind}: {message}")
        if self.observed:
            self.emit(WarningEvent(kind=kind, message=message, **fields))

    def _journal_failed(self, event_type: str, exc: BaseException) -> None:
        message = f"the journal could not write a {event_type} event: {describe_exception(exc)}"
        self.warnings.append(f"journal_failed: {message}")
        if self.journal_error is None:
            self.journal_error = message
