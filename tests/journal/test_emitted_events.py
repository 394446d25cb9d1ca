"""The emitter takes typed events (``journal/emitter.py``): for every event type, what it
writes is what the reader reads back, and what its observers get is the event's own fields."""

from __future__ import annotations

import dataclasses
import enum
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from event_strategies import by_hint
from reactloop.journal.emitter import Emitter
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import EVENT_TYPES, Event
from reactloop.journal.field_checks import spec
from reactloop.journal.reader import read_events
from reactloop.journal.schema import (
    BY_TYPE,
    EVENT_CLASSES,
    CheckEvent,
    ToolResultEvent,
    ToolSearchEvent,
    WarningEvent,
)
from reactloop.journal.warning_kinds import WarningKind
from reactloop.journal.writer import Journal, read_journal

# What a journal line holds: JSON the writer takes (whole numbers within 64 bits).
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_SIMPLE: dict[Any, st.SearchStrategy[Any]] = {
    int: st.integers(-(2**63), 2**63 - 1),
    float: st.floats(allow_nan=False, allow_infinity=False),
    str: st.text(),
    bool: st.booleans(),
    WarningKind: st.sampled_from(WarningKind),
    Any: JSON,
}


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    return by_hint(hint, _SIMPLE, JSON)


def _made_in_code(cls: type[JournalEvent]) -> st.SearchStrategy[JournalEvent]:
    """Events of ``cls`` as the loop makes them: its own fields, no ``step`` or ``t``."""
    hints = typing.get_type_hints(cls)
    own = {name: _strategy(hints[name]) for name in spec(cls) if name not in ("step", "t")}
    return st.builds(cls, **own)


def test_every_event_type_has_its_class() -> None:
    assert [BY_TYPE[kind].TYPE for kind in EVENT_TYPES] == list(EVENT_TYPES)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of([_made_in_code(cls) for cls in EVENT_CLASSES]), min_size=1, max_size=6),
    st.integers(0, 10_000),
)
def test_what_the_emitter_writes_is_what_the_reader_reads(
    events: list[JournalEvent], step: int
) -> None:
    seen: list[Event] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.jsonl"
        with Journal(path) as journal:
            emitter = Emitter(journal, [seen.append])
            emitter.step = step
            for event in events:
                emitter.emit(event)
        assert emitter.journal_error is None
        read = read_events(path)
        lines = read_journal(path)
    assert [type(e) for e in read] == [type(e) for e in events]
    for made, back, line in zip(events, read, lines, strict=True):
        assert back == dataclasses.replace(made, step=step, t=back.t)
        assert back.to_dict() == line
        assert list(line) == ["type", "step", "t", *made.data()]  # the line's order
    assert [(e.type, e.step, e.data) for e in seen] == [(e.type, step, e.data()) for e in events]


@settings(max_examples=200, deadline=None)
@given(st.one_of([_made_in_code(cls) for cls in EVENT_CLASSES]))
def test_the_fast_fields_are_the_fields_in_their_order(event: JournalEvent) -> None:
    """``data()`` of an event made in code (its fields kept as given: ``keep_given``) against
    the rule: every field in order, an ``OPTIONAL`` one left out when None, an enum its
    value; and the dict the emitter sends as it is (given exactly ``LINE``) is that line."""
    expected: dict[str, Any] = {}
    for name in spec(type(event)):
        value = getattr(event, name)
        if name in ("step", "t") or (name in event.OPTIONAL and value is None):
            continue
        expected[name] = value.value if isinstance(value, enum.Enum) else value
    assert list(event.data().items()) == list(expected.items())
    if tuple(vars(event)) == event.LINE:  # the emitter sends the event's own dict
        assert list(vars(event).items()) == list(expected.items())
    stamped = dataclasses.replace(event, step=3, t=0.5)
    assert stamped.data() == event.data() and stamped.to_dict()["step"] == 3
    assert not any(isinstance(value, enum.Enum) for value in event.data().values())
    written = dataclasses.replace(event, written=frozenset({"step", *expected}))
    assert written.to_dict() == event.to_dict()  # the generic path, as a read line takes


@st.composite
def _given_otherwise(draw: st.DrawFn) -> tuple[JournalEvent, JournalEvent]:
    """An event given every field in its line's order, and the same made as code may make
    it: its fields in another order, a field with a default left out."""
    made = draw(st.one_of([_made_in_code(cls) for cls in EVENT_CLASSES]))
    cls = type(made)
    fields = dict(vars(made))
    left_out = draw(st.sets(st.sampled_from(cls.FIELDS))) - cls.REQUIRED
    for f in dataclasses.fields(cls):
        if f.name in left_out:
            plain = f.default is not dataclasses.MISSING
            fields[f.name] = f.default if plain else f.default_factory()  # type: ignore[misc]
    given = {name: value for name, value in fields.items() if name not in left_out}
    order = draw(st.permutations(list(given)))
    return cls(**fields), cls(**{name: given[name] for name in order})


@settings(max_examples=200, deadline=None)
@given(_given_otherwise())
def test_an_event_given_its_fields_otherwise_sends_its_lines_order(
    events: tuple[JournalEvent, JournalEvent],
) -> None:
    """The fields an event is given are kept as given (``keep_given``): in another order,
    or with a default left out, it still sends and writes its line as the dataclass made it."""
    full, other = events
    seen: list[Event] = []
    emitter = Emitter(None, [seen.append])
    emitter.emit(full)
    emitter.emit(other)
    assert other == full
    assert list(seen[1].data.items()) == list(seen[0].data.items()) == list(full.data().items())
    assert other.to_dict() == full.to_dict() and list(other.to_dict()) == list(full.to_dict())


def test_a_field_made_by_its_factory_is_made_once_and_a_wrong_field_is_refused() -> None:
    search = ToolSearchEvent(queries=["q"])
    assert search.matches == [] and search.matches is search.matches
    assert search.data() == {"queries": ["q"], "matches": [], "revealed": []}
    with pytest.raises(TypeError, match="has no field 'bogus'"):
        ToolResultEvent(result={}, bogus=1).data()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="without its 'result'"):
        Emitter(None, [print]).emit(ToolResultEvent(content="x"))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ToolResultEvent(1)  # type: ignore[misc]  # fields are given by name
    if sys.version_info >= (3, 13):  # its SimpleNamespace also takes them as one mapping
        with pytest.raises(TypeError, match="without its 'result'"):
            Emitter(None, [print]).emit(ToolResultEvent({"content": "x"}))  # type: ignore[call-arg]


@settings(max_examples=100, deadline=None)
@given(st.one_of([_made_in_code(cls) for cls in EVENT_CLASSES]), st.integers(0, 99))
def test_an_event_sent_again_sends_the_same_data(event: JournalEvent, step: int) -> None:
    """An event made with its step and ``t`` (a read line, a resume's record) sends the
    same ``data`` as one made in code: its own fields, without ``step`` and ``t``."""
    seen: list[Event] = []
    emitter = Emitter(None, [seen.append])
    emitter.step = step
    emitter.emit(event)
    emitter.emit(dataclasses.replace(event, step=step + 1, t=0.25))
    emitter.emit(type(event).from_dict(event.to_dict()))
    assert [type(sent) for sent in seen] == [Event] * 3
    assert [(sent.type, sent.step) for sent in seen] == [(event.type, step)] * 3
    assert seen[0].data == seen[1].data == seen[2].data == event.data()


def test_each_class_names_the_fields_that_may_hold_an_enum() -> None:
    """``ENUMS`` (sent as their text) is declared by hand: it must be the fields whose type
    admits an enum."""

    def holds_enum(hint: Any) -> bool:
        kinds = typing.get_args(hint) or (hint,)
        return any(isinstance(kind, type) and issubclass(kind, enum.Enum) for kind in kinds)

    for cls in EVENT_CLASSES:
        hints = typing.get_type_hints(cls)
        admit = tuple(name for name in spec(cls) if holds_enum(hints[name]))
        assert admit == cls.ENUMS, cls


def test_a_warning_has_its_kind_as_plain_text_and_is_kept_in_the_warnings() -> None:
    seen: list[Event] = []
    emitter = Emitter(None, [seen.append])
    emitter.step = 4
    emitter.warn(WarningKind.BUDGET, "tool call limit (1) reached", call_id="c1")
    emitter.warn_once("refusal", "the adapter's own kind")
    emitter.warn_once("refusal", "said once")
    assert emitter.warnings == [
        "budget: tool call limit (1) reached",
        "refusal: the adapter's own kind",
    ]
    kinds = [event.data["kind"] for event in seen]
    assert kinds == ["budget", "refusal"] and all(type(kind) is str for kind in kinds)
    assert seen[0] == Event(
        "warning", 4, {"kind": "budget", "message": "tool call limit (1) reached", "call_id": "c1"}
    )


def test_a_run_nobody_observes_sends_nothing_but_keeps_its_warnings() -> None:
    emitter = Emitter(None, [])
    emitter.emit(ToolResultEvent(result={"output": 1}, content="1"))
    emitter.warn(WarningKind.WIND_DOWN, "answer now")
    assert not emitter.observed and emitter.warnings == ["wind_down: answer now"]


def test_the_lines_that_write_a_null_write_it() -> None:
    """A passing verify writes ``output: null``, a model error without a request
    ``request: null``: as the loop wrote them when events were emitted as strings."""
    assert CheckEvent.verify(None).data() == {"kind": "verify", "passed": True, "output": None}
    failed = WarningEvent.model_error("boom", "other", None, 0.5)
    assert failed.data() == {
        "kind": "model_error",
        "message": "boom",
        "error_kind": "other",
        "request": None,
        "seconds": 0.5,
    }
    checklist = CheckEvent(kind="checklist", passed=False, items=["a"])
    assert checklist.data() == {"kind": "checklist", "passed": False, "items": ["a"]}
