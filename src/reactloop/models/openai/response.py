"""One HTTP reply of ``/chat/completions`` read into a ``ModelTurn``: a JSON body or a stream.

``read_stream`` feeds the events of a ``text/event-stream`` to a ``StreamAccumulator``; a JSON
body (a server that ignored ``stream: true``) is read as one. When a 200 reply carries no
stream at all, the error says what the server said instead of asking for a retry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import ModelTurn
from reactloop.models.http_errors import preview
from reactloop.models.openai.errors import stream_error
from reactloop.models.openai.reply import parse_body
from reactloop.models.openai.stream import StreamAccumulator
from reactloop.models.sse import DONE, iter_sse_events, keeping_start, parse_json_payload

# llama_cpp.server answers 200, then fails before its first chunk (and logs why): the known cases.
_EMPTY_STREAM_HINT = (
    'llama_cpp.server does this for tool_choice "auto" with stream ("Automatic streaming '
    'tool choice is not supported"): force a tool with --tool-choice NAME or drop --stream'
)


def read_stream(
    provider: str,
    content_type: str,
    reads: Iterable[bytes],
    on_text: Callable[[str], None] | None = None,
) -> ModelTurn:
    """One streamed HTTP reply (its body as network reads) as a ``ModelTurn``.

    A JSON body (a server that ignored ``stream: true``) is read as one; an ``event: error``
    event, or a 200 reply with no chunk at all, is an error saying what the server said, not
    retried: the same request would fail the same way.
    """
    if "json" in content_type:
        turn = parse_body(b"".join(reads), provider=provider)
        if on_text is not None and turn.text:
            on_text(turn.text)
        return turn
    start = bytearray()
    accumulator = StreamAccumulator(provider=provider)
    for chunk in _chunks(provider, keeping_start(reads, start)):
        text = accumulator.feed(chunk)
        if text and on_text is not None:
            on_text(text)
    if not accumulator.chunks:
        raise _empty_stream(provider, content_type, start)
    return accumulator.result()


def _chunks(provider: str, reads: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    for event in iter_sse_events(reads):
        if event.data.strip() == DONE:
            return
        if event.event == "error":
            raise stream_error(provider, _error_payload(event.data))
        yield parse_json_payload(event.data)


def _error_payload(data: str) -> Any:
    try:
        payload = parse_json_payload(data)
    except ModelError:
        return data
    inner = payload.get("error")
    return inner if isinstance(inner, Mapping | str) and inner else payload


def _empty_stream(provider: str, content_type: str, start: bytes | bytearray) -> ModelError:
    if "event-stream" not in content_type:
        return ModelError(
            f"{provider} answered a streamed request with "
            f"{content_type or 'no content type'}, not an event stream: {preview(start)}"
        )
    lines = bytes(start).decode("utf-8", errors="replace").splitlines()
    said = [line for line in lines if line.strip() and not line.startswith(":")]
    if said:
        return ModelError(f"{provider} sent a stream without chunks; it said: {preview(start)}")
    if any(lines):  # keep-alive comments only: the server was working, then gave up
        return ModelError(
            f"{provider} sent only keep-alives, then ended the stream", retryable=True
        )
    return ModelError(
        f"{provider} accepted the streamed request (HTTP 200) and sent nothing: the server "
        f"failed before its first chunk (its log says why). {_EMPTY_STREAM_HINT}"
    )


__all__ = ["read_stream"]
