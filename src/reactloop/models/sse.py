"""An incremental decoder for Server-Sent Events, following the WHATWG parsing rules.

Feed it bytes exactly as they arrive from the network; it keeps partial lines and partial
UTF-8 characters between reads, and returns the events completed by each read::

    decoder = SSEDecoder()
    for block in response.iter_bytes():
        for event in decoder.feed(block):
            handle(event.event, event.data)
    decoder.close()

``iter_sse_json`` is the short way for OpenAI-style streams: it yields each ``data:`` payload
as a dict and stops at ``[DONE]``.

Rules kept (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines end with
CRLF, LF or CR; a leading BOM is dropped; lines starting with ``:`` are comments
(keep-alives); ``field:value`` loses one leading space of the value; several ``data`` lines
join with ``\\n``; a blank line dispatches the event, unless it has no data; an event cut off
by the end of the stream (no blank line after it) is discarded, as the spec says.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from reactloop.errors import ModelError
from reactloop.support import json_decode

DONE = "[DONE]"


@dataclass(frozen=True, kw_only=True, slots=True)
class SSEEvent:
    """One dispatched server-sent event. ``event`` is ``"message"`` unless the server named it."""

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Turns a byte stream into ``SSEEvent`` values; one instance per stream."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial_line: list[str] = []
        self._at_start = True
        self._event_type = ""
        self._data: list[str] = []
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self.discarded = ""
        """The text of an event that the end of the stream cut off (kept for diagnostics)."""

    def feed(self, chunk: bytes | str) -> list[SSEEvent]:
        """Decode one network read; return the events it completed, in order."""
        text = chunk if isinstance(chunk, str) else self._utf8.decode(chunk)
        return self._consume(text, final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: finish the last line; an event without its blank line is discarded."""
        events = self._consume(self._utf8.decode(b"", final=True), final=True)
        if self._data:
            self.discarded = "\n".join(self._data)
        self._data = []
        self._event_type = ""
        return events

    def _consume(self, text: str, *, final: bool) -> list[SSEEvent]:
        if not final and not self._at_start and not _has_line_break(text, self._partial_line):
            self._partial_line.append(text)  # no line ends here: avoid rescanning a long line
            return []
        buffer = "".join(self._partial_line) + text
        self._partial_line = []
        if self._at_start and buffer:
            buffer = buffer.removeprefix("\ufeff")
            self._at_start = False
        events: list[SSEEvent] = []
        start = 0
        while (end := _line_end(buffer, start)) is not None:
            line_stop, next_start = end
            if line_stop == len(buffer) - 1 and buffer[line_stop] == "\r" and not final:
                break  # a CR at the end of a read may be the first half of a CRLF
            event = self._process_line(buffer[start:line_stop])
            if event is not None:
                events.append(event)
            start = next_start
        rest = buffer[start:]
        if final and rest:
            self._process_line(rest)
        elif rest:
            self._partial_line.append(rest)
        return events

    def _process_line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event_type = value
        elif field == "id" and "\0" not in value:
            self._last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        event_type, self._event_type = self._event_type, ""
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return SSEEvent(
            event=event_type or "message",
            data=data,
            id=self._last_event_id,
            retry=self._retry,
        )


def _has_line_break(text: str, partial_line: list[str]) -> bool:
    held_cr = bool(partial_line) and partial_line[-1].endswith("\r")
    return held_cr or "\n" in text or "\r" in text


def _line_end(buffer: str, start: int) -> tuple[int, int] | None:
    """Where the line starting at ``start`` ends, and where the next one starts."""
    lf = buffer.find("\n", start)
    cr = buffer.find("\r", start, lf if lf >= 0 else len(buffer))
    if cr >= 0:
        after = cr + 2 if buffer.startswith("\n", cr + 1) else cr + 1
        return cr, after
    if lf >= 0:
        return lf, lf + 1
    return None


def keeping_start(reads: Iterable[bytes], start: bytearray, size: int = 200) -> Iterator[bytes]:
    """``reads`` unchanged, with their first ``size`` bytes copied into ``start`` (to quote what
    a server sent when its stream turns out to be no stream)."""
    for data in reads:
        if len(start) < size:
            start.extend(data[: size - len(start)])
        yield data


def iter_sse_events(source: bytes | str | Iterable[bytes | str]) -> Iterator[SSEEvent]:
    """Every event of a stream given whole (bytes or text) or as an iterable of reads."""
    decoder = SSEDecoder()
    reads: Iterable[bytes | str] = [source] if isinstance(source, bytes | str) else source
    for read in reads:
        yield from decoder.feed(read)
    yield from decoder.close()


def iter_sse_json(source: bytes | str | Iterable[bytes | str]) -> Iterator[dict[str, Any]]:
    """The JSON object of each ``data:`` payload, up to (not including) ``[DONE]``.

    Raises ``ModelError`` naming the payload when one is not a JSON object: a stream we cannot
    read is a failed model call, never a silently shorter one.
    """
    for event in iter_sse_events(source):
        if event.data.strip() == DONE:
            return
        yield parse_json_payload(event.data)


def parse_json_payload(data: str) -> dict[str, Any]:
    """One ``data:`` payload as a dict, or ``ModelError`` showing the start of the bad text."""
    try:
        payload = json_decode.safe_loads(data)
    except json_decode.JSONRefused as exc:
        raise ModelError(
            f"stream payload is not valid JSON ({exc}): {data[:200]!r}", kind="bad_reply"
        ) from None
    if not isinstance(payload, dict):
        raise ModelError(f"stream payload is not a JSON object: {data[:200]!r}", kind="bad_reply")
    return payload


__all__ = [
    "DONE",
    "SSEDecoder",
    "SSEEvent",
    "iter_sse_events",
    "iter_sse_json",
    "keeping_start",
    "parse_json_payload",
]
