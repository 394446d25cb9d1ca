"""Each recorded Anthropic reply read into a turn: stop reasons, calls, thinking, usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.anthropic.reply import (
    STOP_REASONS,
    map_stop,
    parse_body,
    parse_usage,
    turn_from_message,
)

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"


def turn_of(name: str) -> ModelTurn:
    message = parse_body((WIRE / name).read_bytes(), provider="anthropic:test")
    return turn_from_message(message, raw=message, provider="anthropic:test")


def test_tool_use_reply() -> None:
    turn = turn_of("anthropic_tool_use.json")
    assert turn.text == "I'll check the current weather in Paris for you."
    assert turn.finish_reason == "tool_calls" and turn.answer is None
    (call,) = turn.tool_calls
    assert (call.id, call.wire_id, call.name) == ("toolu_01A09q90qw90lq917835lq9K",) * 2 + (
        "get_weather",
    )
    assert json.loads(call.arguments) == {"location": "Paris, France", "unit": "celsius"}
    assert turn.usage == Usage(input_tokens=472 + 2048, output_tokens=89, cached_tokens=2048)


def test_parallel_tool_use_keeps_thinking_with_its_signature() -> None:
    body = json.loads((WIRE / "anthropic_parallel_tool_use.json").read_text())
    turn = turn_of("anthropic_parallel_tool_use.json")
    assert turn.reasoning == "The user wants both files; I'll read them in parallel."
    assert [c.arguments for c in turn.tool_calls] == [
        '{"path": "src/foo.txt"}',
        '{"path": "src/bar.txt"}',
    ]
    assert turn.raw_message == {"role": "assistant", "content": body["content"]}
    assert turn.usage.input_tokens == 5 + 1210 + 23490 and turn.usage.cached_tokens == 23490


@pytest.mark.parametrize(
    ("name", "finish", "answer"),
    [
        ("anthropic_end_turn.json", "stop", "It's 18 °C and partly cloudy in Paris."),
        ("anthropic_stop_sequence.json", "stop", "<answer>42"),
        ("anthropic_max_tokens.json", "length", None),
    ],
)
def test_stop_reasons(name: str, finish: str, answer: str | None) -> None:
    turn = turn_of(name)
    assert turn.finish_reason == finish
    if answer is not None:
        assert turn.answer == answer


def test_refusal_is_content_filter_and_says_why() -> None:
    turn = turn_of("anthropic_refusal.json")
    assert turn.finish_reason == "content_filter"
    assert turn.text == "the model refused (cyber): This request was refused due to policy."
    assert turn.notices == (("refusal", turn.text),)


def test_a_refusal_after_some_text_keeps_the_text_and_gives_the_reason_as_a_notice() -> None:
    details = {"type": "refusal", "category": "bio", "explanation": "Not this."}
    body = {
        "content": [{"type": "text", "text": "Sure, the first step is"}],
        "stop_reason": "refusal",
        "stop_details": details,
    }
    turn = turn_from_message(body, raw=body, provider="anthropic:test")
    assert turn.text == "Sure, the first step is"
    assert turn.notices == (("refusal", "the model refused (bio): Not this."),)
    assert turn_of("anthropic_end_turn.json").notices == ()


def test_context_window_exceeded_is_a_clean_error_that_says_so() -> None:
    with pytest.raises(ModelError, match="filled the model's context window") as caught:
        turn_of("anthropic_model_context_window_exceeded.json")
    assert not caught.value.retryable
    assert "348500 input tokens" in str(caught.value)


def test_pause_turn_is_not_an_answer_by_itself() -> None:
    turn = turn_of("anthropic_pause_turn.json")
    assert turn.finish_reason == "other" and not turn.tool_calls  # server tools are not ours
    kinds = [b["type"] for b in turn.raw_message["content"]]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result"]


def test_the_map_covers_every_documented_stop_reason() -> None:
    documented = {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"}
    assert documented - {"pause_turn"} <= set(STOP_REASONS)
    assert map_stop("brand_new_reason", has_calls=False) == "other"
    assert map_stop("end_turn", has_calls=True) == "tool_calls"
    assert map_stop("max_tokens", has_calls=True) == "length"
    assert map_stop(None, has_calls=False) == "stop"


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, Usage()),
        ({"input_tokens": 3, "output_tokens": 4}, Usage(input_tokens=3, output_tokens=4)),
        (
            {"input_tokens": 1, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100},
            Usage(input_tokens=111, cached_tokens=100, cache_write_tokens=10),
        ),
        ({"input_tokens": 10**400, "output_tokens": float("nan")}, Usage()),
        ({"input_tokens": True, "output_tokens": "seven", "cache_read_input_tokens": -5}, Usage()),
        ({"input_tokens": "12", "output_tokens": 3.0}, Usage(input_tokens=12, output_tokens=3)),
    ],
)
def test_usage_counts_cache_reads_and_writes_as_input(usage: Any, expected: Usage) -> None:
    assert parse_usage(usage) == expected


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"<html>502</html>", "not JSON"),
        (b"[1, 2]", "not a message"),
        (b'{"type": "message"}', "without content"),
        (b"[" * 100_000, "not JSON"),
    ],
)
def test_bodies_that_are_not_messages(body: bytes, match: str) -> None:
    with pytest.raises(ModelError, match=match):
        parse_body(body, provider="anthropic:test")


def test_an_error_body_in_a_200_reply_is_a_provider_error() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(ProviderError, match="Overloaded") as caught:
        parse_body(json.dumps(body).encode(), provider="anthropic:test")
    assert caught.value.retryable
