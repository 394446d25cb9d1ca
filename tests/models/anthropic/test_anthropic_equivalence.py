"""One meaning per reply: every Anthropic fixture, streamed and not streamed, gives one turn.

A recorded body is cut into the events a server would stream for it (``stream_events``), and a
recorded stream is folded into the body a server would send for it by the ``anthropic`` SDK's
own accumulator (an independent reading); both forms must give the same text, reasoning,
calls, finish reason, usage, answer and the content echoed in the next request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event

from reactloop.errors import ModelError, ProviderError
from reactloop.messages import ModelTurn
from reactloop.models.anthropic.reply import parse_body, turn_from_message
from reactloop.models.anthropic.stream import StreamAccumulator, read_reply
from reactloop.models.sse import iter_sse_events
from reactloop.testing.anthropic_replies import stream_events

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
NOT_REPLIES = {"anthropic_request_tool_results.json": "a request, not a reply"}
CUT_OFF = {"anthropic_stream_max_tokens_partial_tool_input"}  # a tool input cut by max_tokens


def fixtures() -> list[Path]:
    return sorted(
        p for p in WIRE.iterdir() if p.name.startswith("anthropic_") and p.name not in NOT_REPLIES
    )


def meaning(turn: ModelTurn) -> dict[str, Any]:
    return {
        "text": turn.text,
        "reasoning": turn.reasoning,
        "calls": [c.to_dict() for c in turn.tool_calls],
        "finish_reason": turn.finish_reason,
        "usage": turn.usage.to_dict(),
        "answer": turn.answer,
        "echo": turn.raw_message,
    }


def outcome(make: Any) -> dict[str, Any]:
    """The meaning of a turn, or the error it raised (both forms must fail alike)."""
    try:
        return meaning(make())
    except ModelError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def from_body(body: dict[str, Any]) -> ModelTurn:
    message = parse_body(json.dumps(body).encode(), provider="anthropic:test")
    return turn_from_message(message, raw=body, provider="anthropic:test")


def from_events(events: list[dict[str, Any]]) -> ModelTurn:
    accumulator = StreamAccumulator(provider="anthropic:test")
    for event in events:
        accumulator.feed(event)
    assert accumulator.finished
    return turn_from_message(accumulator.message(), raw=events, provider="anthropic:test")


def events_of(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(event.data) for event in iter_sse_events(text)]


def sdk_fold(events: list[dict[str, Any]]) -> dict[str, Any]:
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in events:
        if event["type"] != "ping":
            raw: Any = event  # the SDK reads plain dicts as its event models
            snapshot = accumulate_event(event=raw, current_snapshot=snapshot, json_bufs=buffers)
    body: dict[str, Any] = snapshot.model_dump(mode="json", exclude_none=True)
    return body


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: p.name)
def test_both_forms_of_each_fixture_mean_the_same(path: Path) -> None:
    if path.name == "anthropic_stream_error_midstream.sse":
        with pytest.raises(ProviderError, match="Overloaded") as caught:
            read_reply("anthropic:test", "text/event-stream", [path.read_bytes()])
        assert caught.value.retryable and caught.value.code == "overloaded_error"
        return
    if path.suffix == ".json":
        body = json.loads(path.read_text())
        events = stream_events(body, piece=3)
    else:
        events = events_of(path)
        body = sdk_fold(events)
    streamed, whole = outcome(lambda: from_events(events)), outcome(lambda: from_body(body))
    if path.stem in CUT_OFF:  # the SDK guesses a partial object; we keep the text as streamed
        assert streamed["finish_reason"] == whole["finish_reason"] == "length"
        assert json.loads(streamed["calls"][0]["arguments"] + '"]}') == {
            "filename": "taxes.txt",
            "lines_of_text": ["# TAX GUIDE", "", "Filing taxes"],
        }
        assert streamed["echo"]["content"][1]["input"].startswith('{"filename"')
        for key in ("text", "usage", "answer"):
            assert streamed[key] == whole[key]
        return
    assert streamed == whole


def test_every_fixture_is_walked() -> None:
    names = {p.name for p in fixtures()}
    assert len(names) == 16
    assert {"anthropic_pause_turn.json", "anthropic_stream_refusal.jsonl"} <= names
