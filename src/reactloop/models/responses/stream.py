"""A streamed Responses reply assembled into the ``response`` object, then read as one.

Feed each event (the JSON of one SSE ``data:`` payload) in order; ``feed`` returns the text to
show now, ``result`` the turn, read by ``reply.parse_response`` like a non-streamed body::

    stream = ResponseStream(provider="openai-responses")
    for event in iter_sse_json(body):
        print(stream.feed(event), end="")
    turn = stream.result()

The terminal event (``response.completed``, ``response.incomplete``, ``response.failed``)
carries the whole response; its ``output`` is the truth when it has one. A server that sends
it with an empty ``output`` gets the items assembled from the events before it:
``response.output_item.added`` opens an item, ``response.output_text.delta`` /
``response.refusal.delta`` / ``response.function_call_arguments.delta`` grow it,
``response.function_call_arguments.done`` and ``response.output_item.done`` replace what was
grown by the whole value. An ``error`` event raises ``ProviderError`` at once; a stream that
ends before its terminal event (cut mid-item) is a retryable ``ModelError``, never a shorter
turn, so a half-streamed call is never run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import ModelTurn
from reactloop.models.openai.errors import stream_error
from reactloop.models.responses.reply import parse_body, parse_response
from reactloop.models.sse import DONE, iter_sse_events, parse_json_payload

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
TEXT_DELTAS = {"response.output_text.delta": "output_text", "response.refusal.delta": "refusal"}


class ResponseStream:
    """The events of one streamed response, assembled (see the module docstring)."""

    def __init__(self, *, provider: str) -> None:
        self.provider = provider
        self.events = 0
        self._items: dict[int, dict[str, Any]] = {}
        self._texts: dict[tuple[int, str], list[str]] = {}
        self._arguments: dict[int, list[str]] = {}
        self._terminal: dict[str, Any] | None = None

    def feed(self, event: Mapping[str, Any]) -> str:
        """Apply one event; the visible text it adds (``""`` for most events)."""
        self.events += 1
        kind = event.get("type")
        kind = kind if isinstance(kind, str) else ""  # a list or a dict is no event name
        if kind == "error":
            raise stream_error(self.provider, _error_of(event))
        if kind in TERMINAL:
            response = event.get("response")
            if not isinstance(response, Mapping):
                raise ModelError(
                    f"{self.provider} sent {kind} without a response", kind="bad_reply"
                )
            self._terminal = dict(response)
            return ""
        index = self._index(event)
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            item = event.get("item")
            if isinstance(item, Mapping):
                self._items[index] = dict(item)
                if kind == "response.output_item.done":
                    self._drop_fragments(index)
            return ""
        return self._grow(kind, index, event)

    def _grow(self, kind: str, index: int, event: Mapping[str, Any]) -> str:
        delta = event.get("delta")
        if kind in TEXT_DELTAS and isinstance(delta, str):
            self._texts.setdefault((index, TEXT_DELTAS[kind]), []).append(delta)
            return delta if kind == "response.output_text.delta" else ""
        if kind == "response.function_call_arguments.delta" and isinstance(delta, str):
            self._arguments.setdefault(index, []).append(delta)
        elif kind == "response.function_call_arguments.done":
            arguments = event.get("arguments")
            if isinstance(arguments, str):
                self._arguments[index] = [arguments]
        return ""

    def _index(self, event: Mapping[str, Any]) -> int:
        """The item an event is about: its ``output_index``, else (llama-server sends none) the
        item of its ``item_id``, else a new item for ``output_item.added``, else the last."""
        index = event.get("output_index")
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 1 << 20:
            return index
        item = event.get("item")
        item_id = item.get("id") if isinstance(item, Mapping) else event.get("item_id")
        for number, known in self._items.items():
            if item_id is not None and known.get("id") == item_id:
                return number
        if event.get("type") == "response.output_item.added":
            return max(self._items, default=-1) + 1
        return max(self._items, default=0)

    def _drop_fragments(self, index: int) -> None:
        self._arguments.pop(index, None)
        for key in [key for key in self._texts if key[0] == index]:
            del self._texts[key]

    def assembled(self) -> list[dict[str, Any]]:
        """The output items as the events before the terminal one built them."""
        items = []
        for index in sorted(self._items):
            item = dict(self._items[index])
            if index in self._arguments:
                item["arguments"] = "".join(self._arguments[index])
            parts = [
                {"type": kind, ("text" if kind == "output_text" else "refusal"): "".join(text)}
                for (number, kind), text in self._texts.items()
                if number == index
            ]
            if parts and not item.get("content"):
                item["content"] = parts
            items.append(item)
        return items

    def result(self) -> ModelTurn:
        """The turn; a ``ModelError`` when the stream ended before its terminal event."""
        if self._terminal is None:
            raise ModelError(
                f"{self.provider} ended the stream before the response was complete "
                f"({self.events} events, no response.completed)",
                retryable=True,
                kind="connection",
            )
        response = self._terminal
        if not response.get("output"):
            response = {**response, "output": self.assembled()}
        return parse_response(response, provider=self.provider)


def _error_of(event: Mapping[str, Any]) -> Any:
    inner = event.get("error")
    return inner if isinstance(inner, Mapping) and inner else event


def read_stream(
    provider: str,
    content_type: str,
    reads: Iterable[bytes],
    on_text: Callable[[str], None] | None = None,
) -> ModelTurn:
    """One streamed HTTP reply (its body as network reads) as a ``ModelTurn``; a JSON body (a
    server that ignored ``stream: true``) is read as one."""
    if "json" in content_type:
        turn = parse_body(b"".join(reads), provider=provider)
        if on_text is not None and turn.text:
            on_text(turn.text)
        return turn
    stream = ResponseStream(provider=provider)
    for event in _events(reads):
        text = stream.feed(event)
        if text and on_text is not None:
            on_text(text)
    if not stream.events:
        raise ModelError(
            f"{provider} answered a streamed request with {content_type or 'no content type'} "
            "and no events",
            kind="bad_reply",
        )
    return stream.result()


def _events(reads: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    for event in iter_sse_events(reads):
        if event.data.strip() == DONE:
            return
        payload = parse_json_payload(event.data)
        if event.event and "type" not in payload:  # the event name says what the payload is
            payload = {**payload, "type": event.event}
        yield payload
