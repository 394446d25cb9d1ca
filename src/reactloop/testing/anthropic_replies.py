"""Scripted replies for ``FakeAnthropicServer``: messages, streams of them, errors, recorded files.

A message given as a dict is sent as a JSON body, or, when the request asks for
``"stream": true``, as the event stream a real server would send for it (``stream_events``).
Fault injection comes from ``Reply`` (``reactloop.testing``): statuses with headers
(``retry-after``), ``delay``, ``interval`` (a trickle), ``break_after`` (a stream that breaks
off) and ``disconnect``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from reactloop.testing.openai_replies import Reply, error_reply, json_reply, sse_text_reply

Event = dict[str, Any]


def tool_use(name: str, input: Any = None, *, id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` block; without an id it gets ``toolu_<name>`` when put in a message."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": input or {}}
    if id is not None:
        block["id"] = id
    return block


def thinking(text: str, signature: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": signature}


def message(
    text: str | None = None,
    *,
    content: Iterable[Mapping[str, Any]] = (),
    stop_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    model: str = "fake-claude",
    **fields: Any,
) -> dict[str, Any]:
    """A Messages API reply: ``content`` blocks (tool uses get ids), then ``text`` if given."""
    blocks = [dict(block) for block in content]
    for number, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            block.setdefault("id", f"toolu_{number:02d}_{block.get('name', '')}")
    if text is not None:
        blocks.append({"type": "text", "text": text})
    uses_tools = any(block.get("type") == "tool_use" for block in blocks)
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason or ("tool_use" if uses_tools else "end_turn"),
        "stop_sequence": None,
        "usage": dict(usage or {"input_tokens": 10, "output_tokens": 5}),
        **fields,
    }


def anthropic_error(
    status: int, kind: str, text: str, *, headers: Mapping[str, str] | None = None
) -> Reply:
    """An error reply in Anthropic's shape: ``{"type": "error", "error": {type, message}}``."""
    body = {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_fake"}
    return error_reply(status, body, headers=headers)


def stream_events(reply: Mapping[str, Any], *, piece: int = 7) -> list[Event]:
    """The events a server streams for the message ``reply`` (text and JSON in small pieces)."""
    start = {k: v for k, v in reply.items() if k not in ("content", "stop_reason", "stop_details")}
    start.update(content=[], stop_reason=None, stop_sequence=None)
    events: list[Event] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(reply.get("content") or []):
        events += _block_events(index, block, piece)
    delta = {"stop_reason": reply.get("stop_reason"), "stop_sequence": reply.get("stop_sequence")}
    if "stop_details" in reply:
        delta["stop_details"] = reply["stop_details"]
    usage = {"output_tokens": (reply.get("usage") or {}).get("output_tokens", 0)}
    events += [{"type": "message_delta", "delta": delta, "usage": usage}, {"type": "message_stop"}]
    return events


def _block_events(index: int, block: Mapping[str, Any], piece: int) -> list[Event]:
    kind = block.get("type")
    deltas: list[dict[str, Any]] = []
    opened = dict(block)
    if kind == "text":
        opened["text"] = ""
        deltas = [{"type": "text_delta", "text": t} for t in _pieces(block["text"], piece)]
    elif kind == "thinking":
        opened.update(thinking="", signature="")
        deltas = [
            {"type": "thinking_delta", "thinking": t} for t in _pieces(block["thinking"], piece)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind in ("tool_use", "server_tool_use"):
        opened["input"] = {}
        text = json.dumps(block.get("input") or {}) if block.get("input") else ""
        deltas = [
            {"type": "input_json_delta", "partial_json": t} for t in ["", *_pieces(text, piece)]
        ]
    events: list[Event] = [{"type": "content_block_start", "index": index, "content_block": opened}]
    events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas if d]
    return [*events, {"type": "content_block_stop", "index": index}]


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def event_stream(
    events: Iterable[Mapping[str, Any]], *, break_after: int | None = None, interval: float = 0.0
) -> Reply:
    """A ``text/event-stream`` of ``event: TYPE`` / ``data: JSON`` events, one per write."""
    pieces = tuple(
        f"event: {event.get('type', 'message')}\ndata: {json.dumps(event)}\n\n".encode()
        for event in events
    )
    return Reply(
        pieces=pieces, content_type="text/event-stream", break_after=break_after, interval=interval
    )


def anthropic_fixture_replies(path: str | Path) -> list[Reply]:
    """Replies from a recorded wire file (``tests/wire_formats`` conventions).

    ``error_*.json`` -> that error; other ``.json`` -> the body; ``.jsonl`` -> the event stream
    of its lines; ``.sse`` -> the exact SSE text.
    """
    path = Path(path)
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".sse":
        return [sse_text_reply(raw)]
    if path.suffix == ".jsonl":
        return [event_stream(json.loads(line) for line in raw.splitlines() if line.strip())]
    data = json.loads(raw)
    if path.name.startswith("error_"):
        return [error_reply(data["status"], data["body"], headers=data.get("headers"))]
    return [json_reply(data)]


def as_reply(item: Reply | Mapping[str, Any] | str, *, stream: bool) -> Reply:
    """A scripted item as the reply to a request (``stream``: it asked for events)."""
    if isinstance(item, Reply):
        return item
    body = message(item) if isinstance(item, str) else dict(item)
    return event_stream(stream_events(body)) if stream else json_reply(body)
