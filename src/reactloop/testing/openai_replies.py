"""Scripted replies for ``FakeOpenAIServer``: bodies, errors, streams, hang-ups, recorded files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JSON = "application/json"


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted HTTP answer.

    ``body`` is sent whole with a Content-Length; when ``pieces`` is given the body is sent
    with chunked encoding, one flushed piece at a time, ``interval`` seconds apart.
    ``break_after`` closes the connection in the middle of the body after that many pieces.
    ``disconnect`` closes the connection without answering at all. ``delay`` waits before
    answering (a slow server).
    """

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    pieces: tuple[bytes, ...] | None = None
    content_type: str = JSON
    delay: float = 0.0
    interval: float = 0.0
    break_after: int | None = None
    disconnect: bool = False


def json_reply(
    body: Any, *, status: int = 200, headers: Mapping[str, str] | None = None, delay: float = 0.0
) -> Reply:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Reply(status=status, headers=dict(headers or {}), body=data, delay=delay)


def error_reply(status: int, body: Any, *, headers: Mapping[str, str] | None = None) -> Reply:
    """An error status; ``body`` is a JSON value, or a str sent as plain text."""
    if isinstance(body, str):
        return Reply(
            status=status,
            headers=dict(headers or {}),
            body=body.encode(),
            content_type="text/plain",
        )
    return json_reply(body, status=status, headers=headers)


def sse_reply(
    chunks: Iterable[Mapping[str, Any] | str],
    *,
    done: bool = True,
    break_after: int | None = None,
    interval: float = 0.0,
    delay: float = 0.0,
) -> Reply:
    """A ``text/event-stream``: each dict becomes one ``data:`` event, each str is sent as is."""
    pieces = [
        chunk.encode() if isinstance(chunk, str) else f"data: {json.dumps(chunk)}\n\n".encode()
        for chunk in chunks
    ]
    if done:
        pieces.append(b"data: [DONE]\n\n")
    return Reply(
        pieces=tuple(pieces),
        content_type="text/event-stream",
        break_after=break_after,
        interval=interval,
        delay=delay,
    )


def sse_text_reply(text: str, *, break_after: int | None = None) -> Reply:
    """Exact SSE text, sent one event per network write."""
    pieces = [part + "\n\n" for part in text.split("\n\n") if part] if text else []
    if pieces and not text.endswith("\n\n"):
        pieces[-1] = pieces[-1][:-2]
    return sse_reply(pieces, done=False, break_after=break_after)


def disconnect() -> Reply:
    """Close the connection without answering (the client sees a connection error)."""
    return Reply(disconnect=True)


def tool_call(name: str, arguments: Any = None, *, id: str | None = None) -> dict[str, Any]:
    """A wire tool call; ``arguments`` is a dict (encoded) or the exact argument text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": text}}
    if id is not None:
        call["id"] = id
    return call


def completion(
    content: str | None = None,
    *,
    tool_calls: Iterable[Mapping[str, Any]] = (),
    finish_reason: str | None = None,
    reasoning_content: str | None = None,
    usage: Mapping[str, Any] | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """A ``chat.completion`` body; calls without an id get ``call_<n>``."""
    calls = [dict(c) for c in tool_calls]
    for n, call in enumerate(calls):
        call.setdefault("id", f"call_{n}")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    reason = finish_reason or ("tool_calls" if calls else "stop")
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        "usage": dict(usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
    }


def fixture_replies(path: str | Path) -> list[Reply]:
    """Replies from a recorded wire file (the conventions of ``tests/wire_formats``).

    ``error_*.json`` (``{"status", "headers", "body"}``) -> that error; other ``.json`` -> the
    body (a JSON array gives one reply per element); ``.jsonl`` -> an SSE stream of its lines
    plus ``[DONE]``; ``.sse`` -> the exact SSE text; ``.txt`` -> the exact bytes as JSON.
    """
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".sse":
        return [sse_text_reply(raw.decode())]
    if path.suffix == ".jsonl":
        lines = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
        return [sse_reply(lines)]
    if path.suffix == ".txt":
        return [Reply(body=raw)]
    data = json.loads(raw)
    if path.name.startswith("error_"):
        return [error_reply(data["status"], data["body"], headers=data.get("headers"))]
    bodies = data if isinstance(data, list) else [data]
    return [json_reply(body) for body in bodies]


def as_reply(item: Reply | Mapping[str, Any] | str) -> Reply:
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return json_reply(completion(content=item))
    return json_reply(dict(item))
