"""One meaning per reply: the streamed and the non-streamed form of a reply give equal turns.

Every OpenAI-compatible fixture in ``tests/wire_formats`` is walked both ways: a recorded body
is cut into the chunks a server would stream for it, and a recorded stream is folded into the
body a server would send for it; both forms must give the same text, reasoning, calls, finish
reason, usage and verdict (format error, answer).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn
from reactloop.models.openai.reply import (
    FAILED_FINISH_REASONS,
    FINISH_REASONS,
    REASONING_KEYS,
    parse_body,
    parse_completion,
)
from reactloop.models.openai.response import read_stream
from reactloop.models.openai.stream import StreamAccumulator
from reactloop.models.sse import iter_sse_json
from reactloop.testing import completion, tool_call

WIRE = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[2] / "wire_formats"
)
OPENAI_COMPATIBLE = (
    "openai_", "deepseek_", "ollama_", "vllm_", "llamacpp_", "llama", "qwen_", "dashscope_",
)  # fmt: skip
NOT_REPLIES = {
    "deepseek_request_thinking_tool_loop.json": "a request, not a reply",
    "openai_request_tool_results.json": "a request, not a reply",
    "ollama_native_request_tool_results.json": "Ollama's native API, not Chat Completions",
    "ollama_native_tool_call.json": "Ollama's native API, not Chat Completions",
    "ollama_native_tool_call_legacy.json": "Ollama's native API, not Chat Completions",
    "ollama_native_stream_tool_call.ndjson": "Ollama's native API, not Chat Completions",
    "ollama_native_stream_error_midstream.ndjson": "Ollama's native API, not Chat Completions",
    "qwen_hermes_tool_template.json": "a chat template, not a reply",
}


def fixtures() -> list[Path]:
    return sorted(p for p in WIRE.iterdir() if p.name.startswith(OPENAI_COMPATIBLE))


def meaning(turn: ModelTurn) -> dict[str, Any]:
    return {
        "text": turn.text,
        "reasoning": turn.reasoning,
        "calls": [c.to_dict() for c in turn.tool_calls],
        "finish_reason": turn.finish_reason,
        "usage": turn.usage.to_dict(),
        "format_error": turn.format_error,
        "answer": turn.answer,
    }


def pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [text]


def delta(fields: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": fields, "finish_reason": finish}
    return {"object": "chat.completion.chunk", "choices": [choice]}


def chunks_for(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks a server streams for ``body``: role, reasoning, text, calls, finish, usage."""
    choice = body["choices"][0]
    message = choice["message"]
    chunks = [delta({"role": "assistant", "content": ""})]
    for key in REASONING_KEYS:  # one key per delta, as vLLM's doubled fields would arrive
        value = message.get(key)
        if isinstance(value, str) and value:
            chunks.extend(delta({key: piece}) for piece in pieces(value))
            break
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p["text"] for p in content if isinstance(p.get("text"), str))
    if isinstance(content, str) and content:
        chunks.extend(delta({"content": piece}) for piece in pieces(content))
    if isinstance(message.get("refusal"), str) and message["refusal"]:
        chunks.extend(delta({"refusal": piece}) for piece in pieces(message["refusal"]))
    chunks.extend(call_chunks(message))
    chunks.append(delta({}, finish=choice["finish_reason"]))
    if body.get("usage") is not None:
        chunks.append({"object": "chat.completion.chunk", "choices": [], "usage": body["usage"]})
    return chunks


def call_chunks(message: dict[str, Any]) -> list[dict[str, Any]]:
    chunks = []
    for n, call in enumerate(message.get("tool_calls") or []):
        opener: dict[str, Any] = {"index": n, "type": "function"}
        if call.get("id") is not None:
            opener["id"] = call["id"]
        function = call.get("function") or {}
        opener["function"] = {"name": function.get("name"), "arguments": ""}
        chunks.append(delta({"tool_calls": [opener]}))
        arguments = function.get("arguments")
        fragments = pieces(arguments) if isinstance(arguments, str) else [arguments]
        for fragment in fragments:
            entry = {"index": n, "function": {"arguments": fragment}}
            chunks.append(delta({"tool_calls": [entry]}))
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and legacy:
        chunks.append(delta({"function_call": legacy}))
    return chunks


def streamed(chunks: list[dict[str, Any]]) -> ModelTurn:
    """The chunks as SSE bytes, read in small pieces through the adapter's HTTP path."""
    wire = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    data = wire.encode()
    reads = [data[i : i + 17] for i in range(0, len(data), 17)]
    return read_stream("p", "text/event-stream", reads)


def body_for(accumulator: StreamAccumulator, turn: ModelTurn) -> dict[str, Any]:
    """The non-streamed body of a stream: its assembled message, finish reason and usage."""
    snapshot = accumulator.snapshot()
    message = dict(turn.raw_message)
    if "tool_calls" in message:  # without the ids the server never sent
        message["tool_calls"] = [
            {k: v for k, v in wire.items() if k != "id" or call.wire_id}
            for wire, call in zip(message["tool_calls"], turn.tool_calls, strict=True)
        ]
    choice = {"index": 0, "message": message, "finish_reason": snapshot["finish_reason"]}
    return {"object": "chat.completion", "choices": [choice], "usage": snapshot["usage"]}


def recorded_chunks(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(iter_sse_json(text))


def test_every_openai_compatible_fixture_is_walked_or_excluded_for_a_reason() -> None:
    names = {p.name for p in fixtures()}
    assert set(NOT_REPLIES) <= names  # no stale exclusion
    walked = names - set(NOT_REPLIES)
    assert all(Path(n).suffix in (".json", ".jsonl", ".sse", ".txt") for n in walked)
    assert len(walked) >= 30


BODY_FILES = [p for p in fixtures() if p.suffix == ".json" and p.name not in NOT_REPLIES]
STREAM_FILES = [p for p in fixtures() if p.suffix in (".jsonl", ".sse")]


@pytest.mark.parametrize("path", BODY_FILES, ids=lambda p: p.name)
def test_a_recorded_body_and_its_stream_give_equal_turns(path: Path) -> None:
    data = json.loads(path.read_text())
    for body in data if isinstance(data, list) else [data]:
        whole = parse_completion(body, provider="p")
        assert meaning(streamed(chunks_for(body))) == meaning(whole)


@pytest.mark.parametrize("path", STREAM_FILES, ids=lambda p: p.name)
def test_a_recorded_stream_and_its_body_give_equal_turns(path: Path) -> None:
    accumulator = StreamAccumulator(provider="p")
    try:
        for chunk in recorded_chunks(path):
            accumulator.feed(chunk)
    except ProviderError as exc:  # an error in the stream: the same error as a body
        assert "error_midstream" in path.name
        error = next(c["error"] for c in recorded_chunks_lenient(path) if "error" in c)
        with pytest.raises(ProviderError) as caught:
            parse_completion({"error": error}, provider="p")
        assert str(caught.value).split(": ", 1)[1] == str(exc).split(": ", 1)[1]
        assert caught.value.retryable == exc.retryable
        return
    turn = accumulator.result()
    assert meaning(parse_completion(body_for(accumulator, turn), provider="p")) == meaning(turn)


def recorded_chunks_lenient(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in path.read_text().splitlines() if line[6:7] == "{"]


def test_calls_without_ids_streamed_from_index_1_get_the_ids_of_the_body() -> None:
    entries = [{"index": n + 1, "function": {"name": "f", "arguments": "{}"}} for n in range(2)]
    accumulator = StreamAccumulator(provider="p")
    accumulator.feed(delta({"tool_calls": entries}, finish="tool_calls"))
    turn = accumulator.result()
    assert [(c.id, c.wire_id) for c in turn.tool_calls] == [("call_0", ""), ("call_1", "")]
    assert meaning(parse_completion(body_for(accumulator, turn), provider="p")) == meaning(turn)


def test_the_keep_alive_body_and_the_keep_alive_stream_read_as_replies() -> None:
    body = (WIRE / "deepseek_keepalive_nonstream_body.txt").read_bytes()
    turn = parse_body(body, provider="p")
    rebuilt = json.loads(body.decode().strip())
    assert meaning(streamed(chunks_for(rebuilt))) == meaning(turn)
    stream = (WIRE / "deepseek_keepalive_stream.sse").read_bytes()
    assert read_stream("p", "text/event-stream", [stream]).text


def both_ways(body: dict[str, Any]) -> list[Callable[[], ModelTurn]]:
    """Read ``body`` whole, and as the stream a server would send for it."""
    return [lambda: parse_completion(body, provider="p"), lambda: streamed(chunks_for(body))]


ALL_FINISH_REASONS = sorted(FINISH_REASONS) + sorted(FAILED_FINISH_REASONS) + ["whatever", ""]


@pytest.mark.parametrize("with_calls", [False, True], ids=["text", "calls"])
@pytest.mark.parametrize("finish", ALL_FINISH_REASONS)
def test_every_finish_reason_means_the_same_streamed_or_not(finish: str, with_calls: bool) -> None:
    calls = [tool_call("f", {"a": 1}, id="c1")] if with_calls else []
    body = completion("some text", tool_calls=calls, finish_reason=finish or None)
    body["choices"][0]["finish_reason"] = finish
    outcomes: list[dict[str, Any]] = []
    for parse in both_ways(body):
        try:
            outcomes.append(meaning(parse()))
        except ModelError as exc:
            outcomes.append({"error": str(exc), "retryable": exc.retryable})
    if finish == "":  # an empty finish reason is none: a stream without one did not finish
        assert outcomes[1]["retryable"] is True
        return
    assert outcomes[0] == outcomes[1]
    if finish in FAILED_FINISH_REASONS:
        assert outcomes[0]["retryable"] is True and finish in outcomes[0]["error"]


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("refusal", "content_filter"),
        ("tool_use", "tool_calls"),
        ("stop_sequence", "stop"),
        ("content_filter", "content_filter"),
        ("max_tokens", "length"),
        ("end_turn", "stop"),
    ],
)
def test_the_finish_reasons_that_used_to_drift_map_the_same_both_ways(
    finish: str, expected: str
) -> None:
    body = completion("text", finish_reason=finish)
    assert parse_completion(body, provider="p").finish_reason == expected
    assert streamed(chunks_for(body)).finish_reason == expected


@pytest.mark.parametrize("finish", ["abort", "error", "insufficient_system_resource"])
def test_a_failed_generation_is_a_retryable_error_both_ways(finish: str) -> None:
    body = completion("partial", finish_reason=finish)
    for parse in both_ways(body):
        with pytest.raises(ModelError, match=finish) as caught:
            parse()
        assert caught.value.retryable


def test_a_refusal_and_a_legacy_function_call_mean_the_same_both_ways() -> None:
    refusal = completion(None, finish_reason="stop")
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    legacy = completion(None, finish_reason="function_call")
    legacy["choices"][0]["message"]["function_call"] = {"name": "f", "arguments": '{"a": 1}'}
    for body in (refusal, legacy):
        whole = parse_completion(body, provider="p")
        assert meaning(streamed(chunks_for(body))) == meaning(whole)
    assert parse_completion(refusal, provider="p").text == "I can't help with that."
    calls = parse_completion(legacy, provider="p").tool_calls
    assert [(c.id, c.name, c.arguments, c.wire_id) for c in calls] == [
        ("call_0", "f", '{"a": 1}', "")
    ]
