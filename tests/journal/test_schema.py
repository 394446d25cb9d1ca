"""The typed events (``journal/schema.py``, ``journal/reader.py``): one value per event type,
whose dict form is the journal's line exactly, read once and refused with the line's number."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.journal.test_journal_events import SAMPLES

from event_strategies import by_hint
from reactloop import Agent, Defer, Journal, Limits, ScriptedModel, tool
from reactloop.errors import JournalError
from reactloop.journal.events import EVENT_TYPES, Event
from reactloop.journal.field_checks import spec
from reactloop.journal.reader import UnknownEvent, event_from_dict, events_of, read_events
from reactloop.journal.schema import (
    BY_TYPE,
    EVENT_CLASSES,
    JournalEvent,
    RequestEvent,
    StopEvent,
    WarningEvent,
    WarningKind,
)
from reactloop.journal.writer import read_journal

DOCS = Path(__file__).resolve().parents[2] / "docs" / "journal.md"
BASE = ("step", "t")


def test_a_class_for_every_event_type_the_loop_emits() -> None:
    assert tuple(cls.TYPE for cls in EVENT_CLASSES) == EVENT_TYPES


def test_every_sample_line_reads_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        for step, kind in enumerate(EVENT_TYPES):
            journal(Event(type=kind, step=step, data=SAMPLES[kind]))
    events = read_events(path)
    assert [type(e) for e in events] == list(EVENT_CLASSES)
    assert [e.to_dict() for e in events] == read_journal(path)
    assert [e.data() for e in events] == [SAMPLES[kind] for kind in EVENT_TYPES]


@tool
def send(to: str) -> str:
    """Send the report.

    Args:
        to: the recipient
    """
    return f"sent to {to}"


def _runs(tmp_path: Path) -> list[Path]:
    """Journals of real runs: a loop, a refused check, a deferred call resumed, a budget."""
    same = {"name": "send", "arguments": {"to": "a"}}
    loop = tmp_path / "loop.jsonl"
    with Journal(loop) as journal:
        turns = [{"tool_calls": [same]}] * 4 + [{"content": "gave up"}]
        Agent(ScriptedModel(turns), [send], journal=journal).run("send")
    checked = tmp_path / "checked.jsonl"
    with Journal(checked) as journal:
        verify = lambda answer: "not good" if answer == "first" else None  # noqa: E731
        turns2: list[Any] = [{"tool_calls": [same]}, {"content": "first"}, {"content": "second"}]
        Agent(ScriptedModel(turns2), [send], journal=journal, verify=verify).run("answer")
    waiting = tmp_path / "waiting.jsonl"
    turns3: list[Any] = [{"tool_calls": [same]}, {"content": "Sent."}]
    with Journal(waiting) as journal:
        approve = lambda c, t: Defer()  # noqa: E731
        first = Agent(ScriptedModel(turns3), [send], journal=journal, approve=approve)
        pending = first.run("send").pending
    Agent(ScriptedModel(turns3), [send]).resume(waiting, decisions={pending[0].id: True})
    budget = tmp_path / "budget.jsonl"
    with Journal(budget) as journal:
        two = {"tool_calls": [same, {"name": "send", "arguments": {"to": "b"}}]}
        limits = Limits(max_tool_calls=1)
        Agent(
            ScriptedModel([two, {"content": "done"}]), [send], journal=journal, limits=limits
        ).run("x")
    return [loop, checked, waiting, budget]


def test_the_journals_of_real_runs_read_back_exactly(tmp_path: Path) -> None:
    seen: set[str] = set()
    for path in _runs(tmp_path):
        records = read_journal(path)
        events = read_events(path)
        assert [e.to_dict() for e in events] == records
        assert not any(isinstance(e, UnknownEvent) for e in events)
        seen |= {e.type for e in events}
        kinds = {e.kind for e in events if isinstance(e, WarningEvent)}
        assert all(isinstance(k, WarningKind) for k in kinds), kinds
    assert {"check", "approval", "resume", "warning", "stop"} <= seen


def test_a_malformed_event_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    with Journal(path) as journal:
        journal(Event("run_start", 0, SAMPLES["run_start"]))
        journal(Event("request", 1, {"n_messages": "two", "messages_new": []}))
    with pytest.raises(JournalError, match=r"bad\.jsonl:3: request's 'n_messages' is not a whole"):
        read_events(path)
    path.write_text(path.read_text().replace('"n_messages":"two",', ""), encoding="utf-8")
    with pytest.raises(JournalError, match=r":3: a request event without its 'n_messages'"):
        read_events(path)
    with pytest.raises(JournalError, match=r"x: event 1: stop's 'forced' is not true or false"):
        events_of([{"type": "stop", "stop_reason": "x", "forced": "yes"}], "x")


def test_a_field_a_journal_left_out_is_not_written_back_and_unknown_keys_are_kept() -> None:
    old = {"type": "stop", "step": 3, "stop_reason": "final_answer", "answer": "a", "new": [1]}
    event = event_from_dict(old)
    assert isinstance(event, StopEvent) and event.cost is None and not event.forced
    assert event.to_dict() == old
    assert list(event.to_dict()) == list(old)
    future = {"type": "later", "step": 1, "t": 0.5, "what": {"x": 1}}
    unknown = event_from_dict(future)
    assert isinstance(unknown, UnknownEvent) and unknown.type == "later"
    assert unknown.step == 1 and unknown.to_dict() == future


def test_an_event_made_in_code_writes_its_fields_in_the_lines_order() -> None:
    event = RequestEvent(step=2, n_messages=3, messages_new=[], tool_choice="auto")
    expected = ["type", "step", "n_messages", "messages_new", "tool_choice", "wind_down"]
    assert list(event.to_dict()) == expected
    warning = WarningEvent(step=1, kind=WarningKind.BUDGET, message="m")
    assert warning.to_dict() == {"type": "warning", "step": 1, "kind": "budget", "message": "m"}
    assert type(warning.to_dict()["kind"]) is str


# -- hypothesis: every event survives its dict form, and the decoder never does worse than
#    refuse a line with a ValueError ------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    simple: dict[Any, st.SearchStrategy[Any]] = {
        int: st.integers(),
        float: st.floats(allow_nan=False),
        str: st.text(),
        bool: st.booleans(),
        WarningKind: st.sampled_from(WarningKind),
        Any: JSON,
    }
    return by_hint(hint, simple, JSON)


def _events(cls: type[JournalEvent]) -> st.SearchStrategy[JournalEvent]:
    hints = typing.get_type_hints(cls)
    fields = {name: _strategy(hints[name]) for name in spec(cls)}
    return st.builds(cls, **fields)


EVENTS = st.one_of([_events(cls) for cls in EVENT_CLASSES])


@settings(max_examples=300, deadline=None)
@given(EVENTS)
def test_every_event_survives_its_dict_form(event: JournalEvent) -> None:
    line = json.loads(json.dumps(event.to_dict()))
    assert type(event).from_dict(line) == event
    assert event_from_dict(line) == event


LINES = st.builds(
    lambda kind, data: {**data, "type": kind},
    st.sampled_from(sorted(BY_TYPE)),
    st.dictionaries(
        st.sampled_from(sorted({n for c in EVENT_CLASSES for n in spec(c)} | {"x"})), JSON
    ),
)


@settings(max_examples=300, deadline=None)
@given(LINES)
def test_a_line_reads_back_as_written_or_is_refused_with_a_reason(line: dict[str, Any]) -> None:
    try:
        event = event_from_dict(line)
    except ValueError as exc:
        assert line["type"] in str(exc)
        return
    assert event.to_dict() == line


# -- docs/journal.md's table is the code's -------------------------------------------------


def _table() -> dict[str, str]:
    rows: dict[str, str] = {}
    text = DOCS.read_text(encoding="utf-8")
    body = text[text.index("| type | when | fields |") :].split("\n\n", 1)[0]
    for row in body.splitlines()[2:]:
        kind = re.match(r"\| `(\w+)` \|", row)
        assert kind is not None, row
        rows[kind.group(1)] = row
    return rows


def test_the_docs_table_lists_exactly_the_event_types_and_their_fields() -> None:
    table = _table()
    assert list(table) == list(EVENT_TYPES)
    for cls in EVENT_CLASSES:
        missing = [n for n in spec(cls) if n not in BASE and f"`{n}`" not in table[cls.TYPE]]
        assert not missing, f"docs/journal.md's {cls.TYPE} row lacks {missing}"


def test_the_docs_table_names_every_warning_kind() -> None:
    row = _table()["warning"]
    assert [k for k in WarningKind if f"`{k.value}`" not in row] == []
