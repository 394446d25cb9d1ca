"""Property tests: whatever a server sends, the Anthropic readers raise only ``ModelError``.

Strategies include JSON nested hundreds of levels deep and integers of thousands of digits,
the two shapes that make naive readers raise ``RecursionError`` or ``ValueError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import ModelError
from reactloop.messages import Message, ModelTurn, ToolCall, ToolSpec
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.anthropic.errors import provider_error, read_error_body, stream_error
from reactloop.models.anthropic.reply import parse_body, parse_usage, turn_from_message
from reactloop.models.anthropic.request import render_messages
from reactloop.models.anthropic.stream import StreamAccumulator, read_reply
from reactloop.models.base import ModelRequest
from reactloop.testing.anthropic_replies import message, thinking, tool_use
from reactloop.testing.fake_anthropic import FakeAnthropicServer

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
HUGE = st.integers(min_value=10**300, max_value=10**400) | st.integers(
    min_value=10**4400, max_value=10**4500
)
LEAVES = st.none() | st.booleans() | st.floats() | st.integers() | HUGE | st.text(max_size=20)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
NINES = "9" * 5000
DEPTH = st.integers(min_value=1, max_value=3000)
SPEC = ToolSpec(name="t", description="a tool", parameters={"type": "object"})
KEYS = ["type", "index", "delta", "content_block", "message", "usage", "text", "error"]


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def turn_or_error(make: Any) -> ModelTurn | None:
    try:
        turn = make()
    except ModelError:
        return None
    assert isinstance(turn, ModelTurn)
    return turn


@given(VALUES, DEPTH)
@settings(max_examples=150, deadline=None)
def test_error_bodies_of_any_shape_are_read(value: Any, depth: int) -> None:
    for text in (
        _dumps(value),
        '{"type": "error", "error": ' + _dumps(value) + "}",
        '{"error": {"message": ' + deep(depth) + "}}",
        '{"error": {"type": ' + "9" * 5000 + ', "message": "m"}}',
    ):
        body = read_error_body(text)
        assert isinstance(body.message, str) and len(body.message) <= 500
        assert str(provider_error("anthropic:t", 400, {}, text))
    assert str(stream_error("anthropic:t", value))


@given(VALUES, DEPTH)
@settings(max_examples=150, deadline=None)
def test_bodies_of_any_shape_give_a_turn_or_a_model_error(value: Any, depth: int) -> None:
    message = {"type": "message", "content": [value, {"type": "tool_use", "input": value}]}
    huge = '{"content": [{"type": "tool_use", "input": {"n": %s}}], "usage": {"input_tokens": %s}}'
    texts = (
        _dumps(value),
        _dumps(message),
        '{"content": ' + deep(depth) + "}",
        huge % (NINES, NINES),
    )
    for text in texts:
        turn_or_error(lambda t=text: _turn(parse_body(t.encode(), provider="anthropic:t")))
    assert parse_usage(value).input_tokens >= 0


EVENT_TYPES = st.sampled_from(
    ["message_start", "content_block_start", "content_block_delta", "content_block_stop",
     "message_delta", "message_stop", "ping", "error"]
)  # fmt: skip
DELTA_TYPES = st.sampled_from(
    ["text_delta", "thinking_delta", "signature_delta", "input_json_delta", "citations_delta"]
)
FIELDS = st.sampled_from(
    ["text", "thinking", "signature", "partial_json", "citation", "citations", "usage",
     "content", "stop_reason", "input", "type"]
)  # fmt: skip
SHAPED = st.fixed_dictionaries(
    {"type": EVENT_TYPES, "index": st.integers(min_value=0, max_value=3) | VALUES},
    optional={
        "delta": st.fixed_dictionaries({"type": DELTA_TYPES}).flatmap(
            lambda d: st.dictionaries(FIELDS, VALUES, max_size=4).map(lambda x: {**x, **d})
        ),
        "content_block": st.dictionaries(FIELDS, VALUES, max_size=4),
        "message": st.dictionaries(FIELDS, VALUES, max_size=4),
        "usage": VALUES,
    },
)


@given(st.lists(SHAPED, max_size=16))
@settings(max_examples=300, deadline=None)
def test_any_shaped_event_sequence_gives_a_turn_or_a_model_error(events: list[Any]) -> None:
    def fold() -> ModelTurn:
        accumulator = StreamAccumulator(provider="anthropic:t")
        for event in events:
            accumulator.feed(event)
        return _turn(accumulator.message())

    turn_or_error(fold)


@given(st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5), max_size=12))
@settings(max_examples=150, deadline=None)
def test_any_event_sequence_gives_a_turn_or_a_model_error(events: list[dict[str, Any]]) -> None:
    def fold() -> ModelTurn:
        accumulator = StreamAccumulator(provider="anthropic:t")
        for event in events:
            accumulator.feed(event)
        return _turn(accumulator.message())

    turn_or_error(fold)


@given(st.lists(st.integers(min_value=1, max_value=200), min_size=1, max_size=20))
@settings(max_examples=60, deadline=None)
def test_a_stream_split_anywhere_reads_the_same(cuts: list[int]) -> None:
    data = (WIRE / "anthropic_stream_thinking_parallel_tool_use.sse").read_bytes()
    reads, position = [], 0
    for cut in cuts:
        reads.append(data[position : position + cut])
        position += cut
    reads.append(data[position:])
    whole = read_reply("anthropic:t", "text/event-stream", [data])[0]
    assert read_reply("anthropic:t", "text/event-stream", reads)[0] == whole


@given(st.text(max_size=40), DEPTH)
@settings(max_examples=80, deadline=None)
def test_rendering_any_arguments_gives_an_object_input(arguments: str, depth: int) -> None:
    for text in (arguments, deep(depth), '{"n": ' + "9" * 5000 + "}"):
        call = ToolCall(id="call_1", name="t", arguments=text)
        history = [
            Message(role="user", content="go"),
            Message(role="assistant", tool_calls=(call,)),
        ]
        (use,) = render_messages(history)[1]["content"]
        assert isinstance(use["input"], dict)
        json.dumps(use)


def _turn(message: dict[str, Any]) -> ModelTurn:
    return turn_from_message(message, raw=None, provider="anthropic:t")


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except ValueError:  # an integer too long to write
        return "{}"


@given(st.text(min_size=1, max_size=60), st.text(min_size=1, max_size=60), st.booleans())
@settings(max_examples=25, deadline=None)
def test_any_thinking_block_comes_back_unchanged_over_http(
    text: str, signature: str, stream: bool
) -> None:
    block = thinking(text, signature)
    script = [message(content=[block, tool_use("t", {"k": text})]), message("done")]
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel(model="m", base_url=server.base_url, stream=stream, max_retries=0)
        history = [Message(role="user", content="go")]
        turn = model.complete(ModelRequest(messages=history, tools=[SPEC]))
        history += [
            Message(role="assistant", tool_calls=turn.tool_calls, raw=turn.raw_message),
            Message(role="tool", content='{"ok": true}', tool_call_id=turn.tool_calls[0].id),
        ]
        model.complete(ModelRequest(messages=history, tools=[SPEC]))
    echoed = server.requests[1].json["messages"][1]["content"]
    assert echoed[0] == block
    assert echoed[1]["input"] == {"k": text}


def test_citations_and_usage_arrive_on_blocks_and_messages_that_had_none() -> None:
    accumulator = StreamAccumulator(provider="anthropic:t")
    citation = {"type": "char_location", "cited_text": "x"}
    text_block = {"type": "text", "citations": None}
    cite = {"type": "citations_delta", "citation": citation}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": None}},
        {"type": "content_block_start", "index": 0, "content_block": text_block},
        {"type": "content_block_delta", "index": 0, "delta": cite},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "cited"},
        },
        {"type": "message_delta", "delta": {"usage": 5}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    for event in events:
        accumulator.feed(event)
    message = accumulator.message()
    assert message["content"] == [{"type": "text", "citations": [citation], "text": "cited"}]
    assert message["usage"] == {"output_tokens": 3}
    assert _turn(message).text == "cited"
