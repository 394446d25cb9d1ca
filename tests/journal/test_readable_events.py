"""``readable_events``: a damaged journal read as the readers that count and show read it
(a field of the wrong kind as absent, a line without its type's required fields left out,
every line read back as it was), and ``event_of``/``JournalEvent.given`` they read with."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.journal.test_journal_events import SAMPLES

from reactloop.journal.events import EVENT_TYPES, Event
from reactloop.journal.field_checks import spec
from reactloop.journal.reader import event_from_dict, event_of, readable_events
from reactloop.journal.schema import BY_TYPE, CompactionEvent, JournalEvent, StopEvent

_JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4), st.just([1])
)


@st.composite
def _records(draw: st.DrawFn) -> dict[str, Any] | JournalEvent:
    """A sample line of any type, perhaps with one of its fields (or its type) replaced by
    junk, or with a field left out; or a typed event."""
    kind = draw(st.sampled_from(EVENT_TYPES))
    record: dict[str, Any] = {"type": kind, "step": draw(st.integers(0, 9)), **SAMPLES[kind]}
    how = draw(st.sampled_from(("as is", "junk", "left out", "typed")))
    names = ["type", *spec(BY_TYPE[kind])]
    name = draw(st.sampled_from(names))
    if how == "junk":
        record[name] = draw(_JUNK)
    elif how == "left out" and name != "type":
        record.pop(name, None)
    elif how == "typed":
        return event_from_dict(record)
    return record


def _keeps(record: dict[str, Any] | JournalEvent) -> bool:
    """Whether a line has what no reader can do without: its type, its required fields."""
    if isinstance(record, JournalEvent):
        return True
    cls = BY_TYPE.get(record["type"]) if isinstance(record["type"], str) else None
    if cls is None:
        return isinstance(record["type"], str)
    return all(
        name in record and check(record[name])
        for name, (required, check, _) in spec(cls).items()
        if required
    )


def _line(record: dict[str, Any] | JournalEvent) -> dict[str, Any]:
    return record.to_dict() if isinstance(record, JournalEvent) else record


@settings(max_examples=300, deadline=None)
@given(st.lists(_records(), max_size=12))
def test_every_line_with_its_required_fields_reads_back_as_it_was(records: list[Any]) -> None:
    read = list(readable_events(records))
    assert [e.to_dict() for e in read] == [_line(r) for r in records if _keeps(r)]
    kept = {id(e) for e in read}  # a typed event is passed on, not read again
    assert all(id(r) in kept for r in records if isinstance(r, JournalEvent))
    for event in read:  # a field of the wrong kind reads as absent, never as its junk
        for name, (_, check, _) in spec(type(event)).items():
            value = event.given(name)
            assert value is None or check(value)


def test_a_line_that_reads_as_is_reads_as_the_strict_reader_reads_it() -> None:
    for step, kind in enumerate(EVENT_TYPES):
        line = {"type": kind, "step": step, **SAMPLES[kind]}
        (event,) = readable_events([line])
        assert event == event_from_dict(line)


def test_a_damaged_line_is_read_for_what_it_still_holds() -> None:
    records = [
        {"type": "turn", "step": 1, "turn": "not an object"},
        {"type": 5},
        {"type": "stop", "step": "2", "stop_reason": "final_answer", "answer": "42", "cost": "x"},
    ]
    (stop,) = readable_events(records)
    assert isinstance(stop, StopEvent) and stop.answer == "42"
    assert (stop.step, stop.cost, stop.given("cost")) == (0, None, None)
    assert stop.to_dict() == records[2]


def test_a_live_event_reads_as_its_journal_line() -> None:
    for step, kind in enumerate(EVENT_TYPES):
        live = event_of(Event(kind, step, SAMPLES[kind]))
        assert live is not None
        assert live.to_dict() == {"type": kind, "step": step, **SAMPLES[kind]}
    assert event_of(Event("turn", 1, {"turn": "not an object"})) is None


def test_given_is_none_only_for_a_field_the_line_did_not_hold() -> None:
    old = CompactionEvent.from_dict({"type": "compaction", "start": 0, "replaced": 3})
    assert (old.given("start"), old.given("replaced"), old.given("block")) == (0, 3, None)
    assert old.block == 0  # the attribute has its default
    made = CompactionEvent(start=1, replaced=2)
    assert made.given("block") == 0  # made in code: every field given
