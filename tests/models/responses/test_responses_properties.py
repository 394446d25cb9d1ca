"""Hostile replies (hypothesis): the body and stream parsers give a turn or a ``ModelError``.

Deep nesting, huge numbers, broken JSON arguments, wrong types in every field, events in any
order, streams cut anywhere: never another exception, never a call from a cut-off stream.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import ModelError
from reactloop.models.responses.reply import parse_body, parse_response
from reactloop.models.responses.stream import ResponseStream, read_stream
from reactloop.testing import function_call, response, response_events
from reactloop.testing.responses_replies import sse_events

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
TYPES = st.sampled_from(["message", "function_call", "reasoning", "output_text", "refusal", "x"])
STATUSES = st.sampled_from(["completed", "incomplete", "failed", "in_progress", None, 7])


@st.composite
def hostile_bodies(draw: st.DrawFn) -> dict[str, Any]:
    items = draw(st.lists(st.dictionaries(st.sampled_from(
        ["type", "call_id", "name", "arguments", "content", "summary", "status", "id"]
    ), VALUES | TYPES, max_size=6), max_size=4))  # fmt: skip
    for item in items:
        item.setdefault("type", draw(TYPES))
    return {
        "status": draw(STATUSES),
        "output": items,
        "usage": draw(VALUES),
        "incomplete_details": draw(VALUES),
        "error": draw(VALUES),
    }


def read_or_refuse(read: Any) -> Any:
    try:
        return read()
    except ModelError as exc:
        return exc


@settings(max_examples=60, deadline=None)
@given(hostile_bodies())
def test_any_body_is_a_turn_or_a_model_error(body: dict[str, Any]) -> None:
    turn = read_or_refuse(lambda: parse_response(body, provider="t"))
    if not isinstance(turn, ModelError):
        assert all(isinstance(c.arguments, str) for c in turn.tool_calls)
        assert turn.usage.input_tokens >= 0


@settings(max_examples=40, deadline=None)
@given(hostile_bodies(), st.data())
def test_any_event_sequence_is_a_turn_or_a_model_error(body: dict[str, Any], data: Any) -> None:
    valid = response("hi", calls=[function_call("calc", "{")])
    events = response_events(valid) if data.draw(st.booleans()) else []
    events += [{"type": "response.output_item.added", "output_index": n, "item": item}
               for n, item in enumerate(body["output"])]  # fmt: skip
    events.append({"type": "response.completed", "response": body})
    hostile = st.dictionaries(st.sampled_from(["type", "delta", "output_index", "item_id"]), VALUES)
    events += data.draw(st.lists(hostile, max_size=4))
    events = data.draw(st.permutations(events))
    stream = ResponseStream(provider="t")

    def run() -> Any:
        for event in events:
            stream.feed(event)
        return stream.result()

    read_or_refuse(run)


def test_deep_nesting_and_huge_numbers_are_refused_or_ignored() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert isinstance(read_or_refuse(lambda: parse_body(deep.encode(), provider="t")), ModelError)
    body = response("hi", usage={"input_tokens": 10**400, "output_tokens": -5})
    turn = parse_body(json.dumps(body).encode(), provider="t")
    assert turn.usage.input_tokens == 0 and turn.usage.output_tokens == 0
    huge = json.dumps(body).replace("1" + "0" * 400, "1" + "0" * 5000)
    assert isinstance(read_or_refuse(lambda: parse_body(huge.encode(), provider="t")), ModelError)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.integers(min_value=0, max_value=40))
def test_broken_arguments_are_kept_as_written_and_a_cut_stream_runs_nothing(
    arguments: str, cut: int
) -> None:
    body = response(calls=[function_call("calc", arguments, call_id="c1")])
    whole = sse_events(response_events(body)).encode()
    turn = read_stream("t", "text/event-stream", [whole])
    assert turn.tool_calls[0].arguments == arguments
    events = response_events(body)
    cut_text = sse_events(events[: min(cut, len(events) - 1)]).encode()
    refused = read_or_refuse(lambda: read_stream("t", "text/event-stream", [cut_text]))
    assert isinstance(refused, ModelError)
