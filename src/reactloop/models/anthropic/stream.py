"""A streamed Messages reply assembled into the message a non-streamed reply would hold.

Feed each event's JSON in order; ``feed`` returns the text to show now, ``message`` the
assembled message, which ``reply.turn_from_message`` reads like any body::

    accumulator = StreamAccumulator(provider="anthropic:claude-sonnet-4-6")
    for payload in payloads:
        print(accumulator.feed(payload), end="")
    message = accumulator.message()

Fragments are assembled per content block ``index``: ``text_delta`` and ``thinking_delta``
are appended, ``signature_delta`` sets the signature (byte-exact: it is echoed later),
``input_json_delta`` fragments are joined and decoded when the block stops (no fragment, or
only ``""``, is ``{}``), ``citations_delta`` adds a citation. A tool input that ``max_tokens``
cut off stays the text as streamed (a str, never run). ``message_delta`` sets the stop reason
and updates the usage. An ``error`` event is a ``ProviderError``; a stream that ends before
``message_stop`` is a ``ModelError`` (retryable), never a shorter turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reactloop.errors import ModelError
from reactloop.models.anthropic.errors import stream_error
from reactloop.models.anthropic.reply import message_text, parse_body
from reactloop.models.http_errors import preview
from reactloop.models.sse import iter_sse_events, keeping_start, parse_json_payload
from reactloop.support import json_decode

APPENDED = {"text_delta": "text", "thinking_delta": "thinking"}


class StreamAccumulator:
    """The state of one streamed reply."""

    def __init__(self, *, provider: str = "anthropic") -> None:
        self.provider = provider
        self.events: list[dict[str, Any]] = []
        self.started = False
        self.finished = False
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._inputs: dict[int, list[str]] = {}

    def feed(self, payload: Mapping[str, Any]) -> str:
        """One event's JSON; returns the text it adds (for the console)."""
        self.events.append(dict(payload))
        kind = payload.get("type")
        if kind == "error":
            raise stream_error(self.provider, payload.get("error"))
        if kind == "message_start":
            self._start(payload.get("message"))
        elif kind == "content_block_start":
            self._open_block(payload)
        elif kind == "content_block_delta":
            return self._delta(self._known_index(payload), payload.get("delta"))
        elif kind == "content_block_stop":
            self._close_block(self._index(payload))
        elif kind == "message_delta":
            self._message_delta(payload)
        elif kind == "message_stop":
            self.finished = True
        return ""

    def message(self) -> dict[str, Any]:
        """The message so far, blocks in index order (an unfinished tool input as its text)."""
        for index in list(self._inputs):
            self._close_block(index)
        message = dict(self._message)
        message["content"] = [self._blocks[index] for index in sorted(self._blocks)]
        return message

    def _start(self, message: Any) -> None:
        if not isinstance(message, Mapping):
            raise ModelError(
                f"{self.provider} sent message_start without a message", kind="bad_reply"
            )
        self.started = True
        self._message = {k: v for k, v in message.items() if k != "content"}
        usage = message.get("usage")
        self._message["usage"] = dict(usage) if isinstance(usage, Mapping) else {}

    def _open_block(self, payload: Mapping[str, Any]) -> None:
        index = self._index(payload)
        block = payload.get("content_block")
        if not isinstance(block, Mapping):
            raise ModelError(
                f"{self.provider} sent content_block_start without a block", kind="bad_reply"
            )
        self._blocks[index] = dict(block)
        if block.get("type") in ("tool_use", "server_tool_use"):
            self._inputs[index] = []

    def _known_index(self, payload: Mapping[str, Any]) -> int:
        index = self._index(payload)
        if index not in self._blocks:
            raise ModelError(
                f"{self.provider} streamed a delta for block {index} before it began",
                kind="bad_reply",
            )
        return index

    def _delta(self, index: int, delta: Any) -> str:
        block = self._blocks[index]
        delta = delta if isinstance(delta, Mapping) else {}
        kind = delta.get("type")
        if kind in APPENDED:
            key = APPENDED[kind]
            fragment = _text(delta.get(key))
            block[key] = _text(block.get(key)) + fragment
            return fragment if key == "text" else ""
        if kind == "signature_delta":
            block["signature"] = _text(block.get("signature")) + _text(delta.get("signature"))
        elif kind == "input_json_delta":
            parts = self._inputs.get(index)
            if parts is not None:
                parts.append(_text(delta.get("partial_json")))
        elif kind == "citations_delta" and isinstance(delta.get("citation"), Mapping):
            citations = block.get("citations")
            block["citations"] = [
                *(citations if isinstance(citations, list) else []),
                delta["citation"],
            ]
        return ""

    def _close_block(self, index: int) -> None:
        parts = self._inputs.pop(index, None)
        if parts is not None and index in self._blocks:
            self._blocks[index]["input"] = decode_input("".join(parts))

    def _message_delta(self, payload: Mapping[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, Mapping):
            self._message.update((k, v) for k, v in delta.items() if k not in ("content", "usage"))
        usage = payload.get("usage")
        if isinstance(usage, Mapping):
            counts = self._message.get("usage")
            counts = dict(counts) if isinstance(counts, Mapping) else {}
            counts.update({k: v for k, v in usage.items() if v is not None})
            self._message["usage"] = counts

    def _index(self, payload: Mapping[str, Any]) -> int:
        index = payload.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 10**6:
            raise ModelError(
                f"{self.provider} streamed a block without a valid index", kind="bad_reply"
            )
        return index


def decode_input(text: str) -> Any:
    """Joined ``partial_json`` as the tool input: ``{}`` when empty, the text if not an object."""
    if not text.strip():
        return {}
    try:
        value = json_decode.safe_loads(text)
    except json_decode.JSONRefused:
        return text
    return value if isinstance(value, dict) else text


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def read_reply(
    provider: str,
    content_type: str,
    reads: Iterable[bytes],
    on_text: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], Any]:
    """One HTTP reply (its body as network reads) as ``(message, raw)``.

    A JSON body is read whole (``raw`` is the body); an event stream event by event (``raw``
    is the assembled message with the events as received under ``"events"``). ``on_text``
    gets the text as it arrives.
    """
    if "event-stream" not in content_type:
        content = b"".join(reads)
        message = parse_body(content, provider=provider)
        text = message_text(message)
        if on_text is not None and text:
            on_text(text)
        return message, message
    accumulator = StreamAccumulator(provider=provider)
    start = bytearray()
    for event in iter_sse_events(keeping_start(reads, start)):
        payload = parse_json_payload(event.data)
        if event.event == "error" and payload.get("type") != "error":
            payload = {"type": "error", "error": payload.get("error", payload)}
        text = accumulator.feed(payload)
        if text and on_text is not None:
            on_text(text)
    if not accumulator.started:
        raise ModelError(
            f"{provider} sent a stream without a message: {preview(start)}", kind="bad_reply"
        )
    if not accumulator.finished:
        raise ModelError(
            f"{provider}: the stream ended before message_stop", retryable=True, kind="connection"
        )
    message = accumulator.message()
    return message, {**message, "events": accumulator.events}
