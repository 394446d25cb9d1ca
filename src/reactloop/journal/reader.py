"""The journal read as typed events (``schema.py``), each line checked once.

``iter_events(path)`` yields one ``JournalEvent`` per line after the header: a line that is
not an event of its type's shape is a ``JournalError`` naming the file and the line, as a line
that is not JSON is (``writer.iter_lines``). A type this reactloop does not know reads as an
``UnknownEvent``, kept as it was written. ``events_of`` reads records already in memory (a
list ``read_journal`` gave, a live run's events); ``readable_events`` reads them as the
readers that count and show (``cost``, ``view``, eval's health) always did, a damaged line
read for what it still holds; ``event_of`` is a live ``Event``, typed;
``named_type`` the class a line names, for a reader that splits lines before it reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.errors import JournalError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import Event
from reactloop.journal.field_checks import is_int, is_number, short
from reactloop.journal.schema import BY_TYPE
from reactloop.journal.writer import iter_lines


@dataclass(frozen=True, kw_only=True)
class UnknownEvent(JournalEvent):
    """An event of a type this reactloop does not write (a newer one did): kept, not read."""

    name: str = ""

    @property
    def type(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.name, **self.extra}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> UnknownEvent:
        step, t = data.get("step"), data.get("t")
        return cls(
            name=str(data["type"]),
            step=step if is_int(step) else 0,
            t=t if is_number(t) else None,
            extra={k: v for k, v in data.items() if k != "type"},
            written=frozenset(),
        )


def event_from_dict(data: Mapping[str, Any], *, salvage: bool = False) -> JournalEvent:
    """The typed event of one journal line; ``ValueError`` names what is wrong with it.
    ``salvage``: a field that is not of its kind reads as absent (``JournalEvent.salvaged``)."""
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"an event whose type is not a string: {short(kind)}")
    cls = BY_TYPE.get(kind)
    if cls is None:
        return UnknownEvent.of(data)
    return cls.salvaged(data) if salvage else cls.from_dict(data)


def iter_events(path: str | Path) -> Iterator[JournalEvent]:
    """The events of the journal at ``path``, typed; a torn last line is skipped."""
    for number, record in iter_lines(path):
        try:
            yield event_from_dict(record)
        except ValueError as exc:
            raise JournalError(f"{path}:{number}: {exc}") from None


def read_events(path: str | Path) -> list[JournalEvent]:
    return list(iter_events(path))


def events_of(
    records: Iterable[Mapping[str, Any]], source: str = "the journal"
) -> list[JournalEvent]:
    """Records already read (``read_journal``'s dicts), typed; ``source`` names them in errors."""
    events = []
    for number, record in enumerate(records, start=1):
        try:
            events.append(event_from_dict(record))
        except ValueError as exc:
            raise JournalError(f"{source}: event {number}: {exc}") from None
    return events


Records = Iterable[Mapping[str, Any] | JournalEvent]
"""A journal's events as its readers take them: typed, or its lines (``read_journal``)."""


def readable_events(records: Records) -> Iterator[JournalEvent]:
    """The typed events of ``records`` (journal lines, or events typed already, passed on as
    they are), as the readers that count and show read a damaged journal: what it still
    holds rather than a refusal. A field that is not of its kind reads as absent (as in a
    journal written before it existed); a line without a type, or without its type's
    required fields, is left out."""
    for record in records:
        if isinstance(record, JournalEvent):
            yield record
            continue
        try:
            yield event_from_dict(record, salvage=True)
        except ValueError:
            continue


def named_type(line: Mapping[str, Any]) -> type[JournalEvent] | None:
    """The event class a journal line names, its fields not read yet (None: a type this
    reactloop does not know): for a reader that splits a journal's lines before it reads
    them (``replay``'s first run, cut before the journal's resumes are read as one run)."""
    name = line.get("type")
    return BY_TYPE.get(name) if isinstance(name, str) else None


def event_of(event: Event) -> JournalEvent | None:
    """A live ``Event`` (an observer's) as the typed event its journal line reads as, read
    as ``readable_events`` reads a line; None when it lacks its type's required fields."""
    try:
        return event_from_dict({"type": event.type, "step": event.step, **event.data}, salvage=True)
    except ValueError:
        return None
