"""The recorded Responses wire shapes (``tests/wire_formats/responses``): one meaning per reply.

Every OpenAI fixture is first checked against the official SDK's own types
(``openai.types.responses``), so that none is a shape of our invention; the ``llamacpp_`` ones
are recorded from llama-server (fewer fields: no ``output_index``, no ``sequence_number``).
Then every reply is read both ways: a body is streamed as the events a server sends for it, a
stream is folded into its terminal response, and a stream whose terminal response has no
``output`` is assembled from its events; all give the same text, reasoning, calls, finish
reason and usage, or the same error.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import Response, ResponseStreamEvent

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.openai.errors import provider_error
from reactloop.models.responses.reply import parse_response
from reactloop.models.responses.stream import ResponseStream
from reactloop.models.sse import iter_sse_json
from reactloop.testing import response_events

WIRE = Path(__file__).resolve().parents[2] / "wire_formats" / "responses"
BODIES = sorted(p for p in WIRE.glob("*.json") if not p.name.startswith("error_"))
STREAMS = sorted([*WIRE.glob("*.jsonl"), *WIRE.glob("*.sse")])
ERRORS = sorted(WIRE.glob("error_*.json"))
EVENT_TYPES = {
    value: cls
    for cls in typing.get_args(typing.get_args(ResponseStreamEvent)[0])
    for value in typing.get_args(cls.model_fields["type"].annotation)
}


def events_of(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    if path.suffix == ".sse":
        return list(iter_sse_json(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def meaning(read: Any) -> Any:
    """What a turn means (or the error a reply is), for comparing two reads of one reply."""
    try:
        turn: ModelTurn = read()
    except ModelError as exc:
        return ("error", type(exc).__name__, exc.retryable, str(exc))
    return {
        "text": turn.text,
        "reasoning": turn.reasoning,
        "calls": [c.to_dict() for c in turn.tool_calls],
        "finish": turn.finish_reason,
        "usage": turn.usage,
        "format_error": turn.format_error,
        "notices": turn.notices,
    }


def streamed(events: list[dict[str, Any]]) -> ModelTurn:
    stream = ResponseStream(provider="t")
    for event in events:
        stream.feed(event)
    return stream.result()


@pytest.mark.parametrize(
    "path", [p for p in BODIES + STREAMS if p.name.startswith("openai_")], ids=lambda p: p.name
)
def test_every_openai_fixture_is_a_shape_of_the_official_sdk(path: Path) -> None:
    if path.suffix == ".json":
        Response.model_validate(json.loads(path.read_text()))
        return
    for event in events_of(path):
        EVENT_TYPES[event["type"]].model_validate(event)


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_a_body_and_its_stream_give_equal_turns(path: Path) -> None:
    body = json.loads(path.read_text())
    whole = meaning(lambda: parse_response(body, provider="t"))
    assert meaning(lambda: streamed(response_events(body))) == whole


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_a_stream_equals_its_terminal_response_and_its_assembled_events(path: Path) -> None:
    events = events_of(path)
    terminal = [e for e in events if e["type"].startswith("response.") and "response" in e][-1]
    as_body = meaning(lambda: parse_response(terminal["response"], provider="t"))
    whole = meaning(lambda: streamed(events))
    if events[-1]["type"] == "error":
        assert whole[0] == "error"
        return
    assert whole == as_body
    hollow = [
        {**e, "response": {**e["response"], "output": []}} if e is terminal else e for e in events
    ]
    assert meaning(lambda: streamed(hollow)) == whole


FINISH = {
    "openai_text.json": "stop",
    "openai_function_call.json": "tool_calls",
    "openai_parallel_function_calls.json": "tool_calls",
    "openai_reasoning_function_call.json": "tool_calls",
    "openai_reasoning_text.json": "stop",
    "openai_refusal.json": "content_filter",
    "openai_incomplete_max_output_tokens.json": "length",
    "openai_incomplete_text.json": "length",
    "openai_incomplete_content_filter.json": "content_filter",
    "llamacpp_text.json": "stop",
    "llamacpp_after_function_call_output.json": "stop",
    "llamacpp_cut_at_max_output_tokens.json": "stop",  # it says completed: see cut_at_limit
}


@pytest.mark.parametrize("name", sorted(FINISH))
def test_the_finish_reason_table(name: str) -> None:
    turn = parse_response(json.loads((WIRE / name).read_text()), provider="t")
    assert turn.finish_reason == FINISH[name]


def test_a_failed_response_is_a_provider_error_retried_for_a_server_error() -> None:
    body = json.loads((WIRE / "openai_failed.json").read_text())
    with pytest.raises(ProviderError) as caught:
        parse_response(body, provider="t")
    assert caught.value.retryable and "invalid content" in str(caught.value)
    flagged = {**body, "error": {"code": "invalid_prompt", "message": "flagged"}}
    with pytest.raises(ProviderError) as refused:
        parse_response(flagged, provider="t")
    assert not refused.value.retryable


def test_a_refusal_is_the_text_and_a_notice() -> None:
    turn = parse_response(json.loads((WIRE / "openai_refusal.json").read_text()), provider="t")
    assert turn.text == "I'm sorry, but I can't help with that request."
    assert turn.notices[0][0] == "refusal" and turn.text in turn.notices[0][1]


def test_parallel_calls_keep_their_call_ids_and_argument_text() -> None:
    body = json.loads((WIRE / "openai_parallel_function_calls.json").read_text())
    turn = parse_response(body, provider="t")
    assert [(c.wire_id, c.arguments) for c in turn.tool_calls] == [
        (item["call_id"], item["arguments"]) for item in body["output"]
    ]


def test_usage_with_cached_and_reasoning_tokens() -> None:
    body = json.loads((WIRE / "openai_reasoning_text.json").read_text())
    assert parse_response(body, provider="t").usage == Usage(
        input_tokens=612, output_tokens=80, cached_tokens=512, reasoning_tokens=64
    )
    body["usage"]["input_tokens_details"]["cache_write_tokens"] = 100
    assert parse_response(body, provider="t").usage.cache_write_tokens == 100


def test_reasoning_summary_is_the_turns_reasoning_and_the_item_is_kept_for_echo() -> None:
    body = json.loads((WIRE / "openai_reasoning_function_call.json").read_text())
    turn = parse_response(body, provider="t")
    assert turn.reasoning is not None and turn.reasoning.startswith("**Determining the weather**")
    assert turn.raw_message["response_id"] == body["id"]
    assert turn.raw_message["output"][0]["encrypted_content"].startswith("gAAAA")


RETRYABLE = {
    "error_openai_400_no_tool_output.json": False,
    "error_openai_400_encrypted_content_unsupported.json": False,
    "error_openai_400_previous_response_not_found.json": False,
    "error_openai_429_rate_limit.json": True,
    "error_llamacpp_400_reasoning_without_content.json": False,
    "error_llamacpp_400_call_without_output.json": False,
}


@pytest.mark.parametrize("path", ERRORS, ids=lambda p: p.name)
def test_error_bodies_are_the_chat_adapters_provider_errors(path: Path) -> None:
    data = json.loads(path.read_text())
    error = provider_error("t", data["status"], data["headers"], json.dumps(data["body"]))
    assert error.retryable is RETRYABLE[path.name]
    assert data["body"]["error"]["message"][:40] in str(error)


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_events_named_only_by_item_id_assemble_the_same_turn(path: Path) -> None:
    """llama-server's events have no ``output_index``: items are found by their ids."""
    body = json.loads(path.read_text())
    events = []
    for event in response_events(body):
        event = {k: v for k, v in event.items() if k not in ("output_index", "sequence_number")}
        if "response" in event and event["type"] != "response.created":
            event["response"] = {**event["response"], "output": []}
        events.append(event)
    assert meaning(lambda: streamed(events)) == meaning(lambda: parse_response(body, provider="t"))
