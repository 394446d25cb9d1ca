"""Hostile JSON from a provider or a model: nesting ~100000 deep, integers of 4300+ digits.

Every decoder and parser of the model adapters (``safejson``, the error-body reader, the reply
parser, the SSE payload reader, the stream accumulator, the ``<tool_call>`` recovery, the text
ReAct parser) turns them into its own clean outcome, never ``RecursionError`` or ``ValueError``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, StopReason
from reactloop.errors import ModelError, ProviderError
from reactloop.messages import Message, ModelTurn, ToolSpec
from reactloop.models.base import ModelRequest
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.openai.errors import read_error_body
from reactloop.models.openai.hermes import extract_tool_calls
from reactloop.models.openai.reply import parse_body, parse_completion
from reactloop.models.openai.stream import StreamAccumulator
from reactloop.models.react.adapter import to_turn
from reactloop.models.react.parse import Action, FormatProblem, parse_reply
from reactloop.models.sse import iter_sse_json
from reactloop.support import json_decode, json_encode
from reactloop.testing import FakeOpenAIServer, Reply, error_reply, json_reply

DEEP = 100_000
HUGE = "9" * 5000


def deep_value(depth: int, leaf: Any = 1) -> Any:
    """A list nested ``depth`` deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


deep_texts = st.integers(min_value=130, max_value=DEEP).flatmap(
    lambda n: st.sampled_from(
        [
            "[" * n,
            "[" * n + "]" * n,
            '{"a":' * n + "1" + "}" * n,
            '{"error": {"message": "deep", "x": ' + "[" * n + "]" * n + "}}",
        ]
    )
)
huge_numbers = st.integers(min_value=4301, max_value=20_000).map(lambda n: "7" * n)
huge_texts = huge_numbers.flatmap(
    lambda digits: st.sampled_from(
        [digits, "-" + digits, f'{{"n": {digits}}}', f"[{digits}]", f"{digits}.5e3"]
    )
)
plain_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
hostile_texts = deep_texts | huge_texts | plain_values.map(json.dumps) | st.text()
hostile_values = (
    plain_values
    | st.integers(min_value=10**4400, max_value=10**4500)
    | st.integers(min_value=300, max_value=5000).map(deep_value)
)


@settings(max_examples=150, deadline=None)
@given(text=hostile_texts)
def test_safejson_loads_decodes_like_json_or_raises_only_jsonerror(text: str) -> None:
    try:
        value = json_decode.safe_loads(text)
    except json_decode.JSONRefused as exc:
        assert "\n" not in str(exc)
        return
    assert value == json.loads(text) or value != value  # NaN is not equal to itself
    assert not json_decode.nesting_exceeds(text, json_decode.MAX_DEPTH)


@settings(max_examples=100, deadline=None)
@given(value=hostile_values)
def test_safejson_dumps_encodes_or_raises_only_jsonerror(value: Any) -> None:
    try:
        text = json_encode.safe_dumps(value)
    except json_decode.JSONRefused:
        return
    assert json.loads(text) == value


def test_safejson_refuses_deep_nesting_and_huge_integers_with_one_clear_error() -> None:
    for text in ("[" * DEEP, "[" * 300 + "]" * 300, HUGE, f'{{"a": [{HUGE}]}}'):
        with pytest.raises(json_decode.JSONRefused, match=r"nested deeper|Exceeds the limit"):
            json_decode.safe_loads(text)
    assert json_decode.safe_loads("[" * 100 + "]" * 100) == deep_value(99, [])
    assert json_decode.safe_loads('["[[[[[[", {"k": "]]]"}]') == ["[[[[[[", {"k": "]]]"}]
    value, end = json_decode.raw_decode('x {"a": 1} tail', 2)
    assert value == {"a": 1} and end == 10


@settings(max_examples=150, deadline=None)
@given(text=hostile_texts)
def test_the_error_body_reader_never_raises(text: str) -> None:
    body = read_error_body(text)
    assert isinstance(body.message, str) and body.message and len(body.message) <= 500


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"message": "Invalid schema", "code": "bad_schema", "x": ' + "[" * DEEP + "}}",
        '{"error": {"message": "Invalid schema", "code": "bad_schema", "n": ' + HUGE + "}}",
    ],
    ids=["deep", "huge"],
)
def test_a_provider_400_with_a_hostile_body_keeps_its_status_and_message(body: str) -> None:
    with FakeOpenAIServer([error_reply(400, body)]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, sleep=lambda _: None)
        with pytest.raises(ProviderError) as caught:
            model.complete(request())
    assert caught.value.status == 400 and not caught.value.retryable
    assert "HTTP 400 [bad_schema]: Invalid schema" in str(caught.value)
    assert len(server.requests) == 1


def test_a_run_meeting_a_hostile_400_stops_with_the_providers_error_not_an_internal_one() -> None:
    body = '{"error": {"message": "Invalid schema", "x": ' + "[" * DEEP + "}}"
    with FakeOpenAIServer([error_reply(400, body)]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, sleep=lambda _: None)
        result = Agent(model, [], protocol="native").run("q")
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert result.error == "openai:m HTTP 400: Invalid schema"
    assert not any("internal_error" in warning for warning in result.warnings)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("payload", ["[" * DEEP, '{"choices": ' + HUGE + "}"], ids=["deep", "huge"])
def test_a_hostile_200_reply_is_a_clean_model_error(payload: str, stream: bool) -> None:
    reply = (
        Reply(pieces=(f"data: {payload}\n\n".encode(),), content_type="text/event-stream")
        if stream
        else json_reply(payload.encode())
    )
    with FakeOpenAIServer([reply]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, stream=stream)
        with pytest.raises(ModelError, match=r"nested deeper|Exceeds the limit") as caught:
            model.complete(request())
    assert type(caught.value) is ModelError and not caught.value.retryable


@settings(max_examples=150, deadline=None)
@given(text=hostile_texts)
def test_the_reply_parser_raises_only_model_error(text: str) -> None:
    try:
        turn = parse_body(text.encode(), provider="p")
    except ModelError:
        return
    assert isinstance(turn, ModelTurn)


@settings(max_examples=100, deadline=None)
@given(content=hostile_values, arguments=hostile_values, usage=hostile_values)
def test_parse_completion_of_hostile_values_raises_only_model_error(
    content: Any, arguments: Any, usage: Any
) -> None:
    call = {"id": "c", "function": {"name": "f", "arguments": arguments}}
    message = {"role": "assistant", "content": content, "tool_calls": [call]}
    body = {"choices": [{"message": message, "finish_reason": "tool_calls"}], "usage": usage}
    for data in (body, content, {"error": content}):
        with contextlib.suppress(ModelError):
            parse_completion(data, provider="p")


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(hostile_texts, min_size=1, max_size=3))
def test_the_sse_payload_reader_raises_only_model_error(texts: list[str]) -> None:
    wire = "".join(f"data: {text}\n\n" for text in texts if "\n" not in text and "\r" not in text)
    with contextlib.suppress(ModelError):
        list(iter_sse_json(wire))


@settings(max_examples=100, deadline=None)
@given(content=hostile_values, arguments=hostile_values, error=hostile_values)
def test_the_stream_accumulator_raises_only_model_error(
    content: Any, arguments: Any, error: Any
) -> None:
    entry = {"index": 0, "id": "c", "function": {"name": "f", "arguments": arguments}}
    chunks: list[Any] = [
        {"choices": [{"index": 0, "delta": {"content": content, "tool_calls": [entry]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": content},
        {"error": error},
        content,
    ]
    accumulator = StreamAccumulator(provider="p")
    try:
        for chunk in chunks:
            accumulator.feed(chunk)
        accumulator.result()
    except ModelError:
        pass


@settings(max_examples=150, deadline=None)
@given(inner=hostile_texts, tag=st.sampled_from(["tool_call", "tools", "function_call"]))
def test_tool_call_recovery_never_raises(inner: str, tag: str) -> None:
    for text in (
        f"<{tag}>{inner}</{tag}>",
        f'<{tag}>{{"name": "f", "arguments": {inner}}}</{tag}>',
        f"<{tag}>{inner}",
        f"<function=f><parameter=p>{inner}</parameter></function>",
        f"<{tag}>{{'name': 'f', 'arguments': {inner}}}</{tag}>",
    ):
        remaining, calls = extract_tool_calls(text)
        assert isinstance(remaining, str)
        for _, arguments in calls:
            assert isinstance(json_decode.safe_loads(arguments), dict)


SPECS = [
    ToolSpec(name="f", description="one", parameters={"properties": {"x": {}}}),
    ToolSpec(name="g", description="two", parameters={"properties": {"a": {}, "b": {}}}),
]


@settings(max_examples=150, deadline=None)
@given(argument=hostile_texts, tool=st.sampled_from(["f", "g", "Finish", "h"]))
def test_the_react_parser_and_adapter_never_raise(argument: str, tool: str) -> None:
    text = f"Thought: go\nAction: {tool}[{argument}]"
    parsed = parse_reply(text)
    assert isinstance(parsed, Action | FormatProblem)
    turn = to_turn(ModelTurn(text=text), SPECS, step=1)
    assert isinstance(turn, ModelTurn)
    for call in turn.tool_calls:
        assert isinstance(call.arguments, str)


def test_the_react_parser_reads_a_deep_argument_as_text() -> None:
    argument = "{" * DEEP
    parsed = parse_reply(f"Action: f[{argument}]")
    assert isinstance(parsed, Action) and parsed.argument == argument
    turn = to_turn(ModelTurn(text=f'Action: g[{{"a": {HUGE}}}]'), SPECS, step=1)
    assert turn.tool_calls and turn.tool_calls[0].arguments == f'{{"a": {HUGE}}}'


def request() -> ModelRequest:
    return ModelRequest(messages=[Message(role="user", content="q")])
