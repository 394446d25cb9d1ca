"""``readable_events``: a damaged journal read as the readers that count and show read it
(every line that is an event of its type's shape, typed, in order; the rest left out), and
``event_of``/``JournalEvent.given`` that they read with."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.journal.test_journal_events import SAMPLES

from reactloop.journal.events import EVENT_TYPES, Event
from reactloop.journal.field_checks import spec
from reactloop.journal.reader import event_from_dict, event_of, readable_events
from reactloop.journal.schema import BY_TYPE, CompactionEvent, JournalEvent

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


def _reads(record: dict[str, Any] | JournalEvent) -> JournalEvent | None:
    if isinstance(record, JournalEvent):
        return record
    try:
        return event_from_dict(record)
    except ValueError:
        return None


@settings(max_examples=200, deadline=None)
@given(st.lists(_records(), max_size=12))
def test_every_readable_line_in_order_the_rest_left_out(records: list[Any]) -> None:
    expected = [e for e in map(_reads, records) if e is not None]
    read = list(readable_events(records))
    assert [e.to_dict() for e in read] == [e.to_dict() for e in expected]
    kept = {id(e) for e in read}  # a typed event is passed on, not read again
    assert all(id(r) in kept for r in records if isinstance(r, JournalEvent))


def test_a_damaged_line_is_left_out_and_the_next_read() -> None:
    records = [
        {"type": "turn", "step": 1, "turn": "not an object"},
        {"type": 5},
        {"type": "stop", "step": 2, "stop_reason": "final_answer", "answer": "42"},
    ]
    (stop,) = readable_events(records)
    assert stop.type == "stop" and stop.data()["answer"] == "42"


def test_a_live_event_reads_as_its_journal_line() -> None:
    for step, kind in enumerate(EVENT_TYPES):
        live = event_of(Event(kind, step, SAMPLES[kind]))
        assert live.to_dict() == {"type": kind, "step": step, **SAMPLES[kind]}


def test_given_is_none_only_for_a_field_the_line_did_not_hold() -> None:
    old = CompactionEvent.from_dict({"type": "compaction", "start": 0, "replaced": 3})
    assert (old.given("start"), old.given("replaced"), old.given("block")) == (0, 3, None)
    assert old.block == 0  # the attribute has its default
    made = CompactionEvent(start=1, replaced=2)
    assert made.given("block") == 0  # made in code: every field given
