"""Assemble an OpenAI-compatible ``chat.completion.chunk`` stream into one ``ModelTurn``.

Feed each parsed chunk (the JSON of one SSE ``data:`` payload, as a plain dict) in order;
``feed`` returns the text to show now, ``result`` the assembled turn::

    accumulator = StreamAccumulator()
    for chunk in iter_sse_json(body):
        print(accumulator.feed(chunk), end="")
    turn = accumulator.result()

Servers differ in how they stream; every quirk listed in ``tests/wire_formats/README.md`` is
handled here, so adapters never index ``choices[0]`` themselves:

* tool calls are keyed by their ``index`` (which may start at 1, repeat inside one chunk, or
  interleave between calls) and returned ordered by it; a delta without an index joins the
  call with the same id, or the last call when it has no id either;
* ``id``, ``type`` and ``function.name`` are set from non-empty values and never
  concatenated (DashScope sends ``"id": ""``, llama-cpp-python repeats the name on every
  delta); ``arguments`` fragments are concatenated, whether the opener holds ``""``, no key or
  the first fragment; a call without arguments keeps ``""``;
* deltas are applied before ``finish_reason``, so a fragment riding on the finish chunk counts;
* usage is taken from whichever chunk carries it last (a ``choices: []`` chunk, the finish
  chunk, or every chunk);
* an ``error`` object inside the stream raises ``ProviderError`` at once; a stream that ends
  without a finish reason is a ``ModelError`` from ``result``, never a shorter turn;
* the turn is finished by ``reply.build_turn``, as a non-streamed reply is: the same reply
  gives the same turn either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import ModelTurn, ToolCall
from reactloop.models.openai.errors import stream_error
from reactloop.models.openai.reply import (
    REASONING_KEYS,
    arguments_text,
    build_turn,
    describe,
    make_call,
    non_empty,
    visible_text,
    wire_call,
)

_METADATA_KEYS = ("id", "model", "created", "system_fingerprint", "service_tier")


@dataclass(slots=True)
class _PartialCall:
    index: int
    id: str = ""
    type: str = ""
    name: str = ""
    fragments: list[str] = field(default_factory=list)

    def apply(self, entry: dict[str, Any]) -> None:
        self.id = non_empty(entry.get("id")) or self.id
        self.type = non_empty(entry.get("type")) or self.type
        function = entry.get("function")
        if isinstance(function, dict):
            self.apply_function(function)

    def apply_function(self, function: dict[str, Any]) -> None:
        self.name = non_empty(function.get("name")) or self.name
        arguments = function.get("arguments")
        if arguments is not None:  # text, or an object from a server that sends one
            self.fragments.append(arguments_text(arguments))


class StreamAccumulator:
    """Collects the chunks of one streamed chat completion (choice 0) into a ``ModelTurn``."""

    def __init__(self, *, provider: str = "provider") -> None:
        self._provider = provider
        self._text: list[str] = []
        self._saw_content = False
        self._refusal: list[str] = []
        self._reasoning: list[str] = []
        self._reasoning_key: str | None = None
        self._calls: dict[int, _PartialCall] = {}
        self._last_index: int | None = None
        self._legacy_call: _PartialCall | None = None
        self._wire_finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None
        self._metadata: dict[str, Any] = {}
        self._chunks = 0

    @property
    def chunks(self) -> int:
        """How many chunks have been fed so far."""
        return self._chunks

    @property
    def finished(self) -> bool:
        """Whether a finish reason has arrived (usage may still follow)."""
        return self._wire_finish_reason is not None

    def feed(self, chunk: dict[str, Any]) -> str:
        """Take one chunk; return the new visible text it carries ("" when none)."""
        if not isinstance(chunk, dict):
            raise ModelError(
                f"{self._provider} sent a stream chunk that is not an object: {describe(chunk)}",
                kind="bad_reply",
            )
        self._chunks += 1
        _raise_for_stream_error(chunk, self._provider)
        self._remember_metadata(chunk)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = usage
        visible: list[str] = []
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and choice.get("index", 0) in (0, None):
                visible.append(self._apply_choice(choice))
        return "".join(visible)

    def result(self) -> ModelTurn:
        """The assembled turn; ``ModelError`` when the stream never finished or was abandoned."""
        reason = self._wire_finish_reason
        if reason is None:
            raise ModelError(
                f"{self._provider} stream ended without a finish reason after {self._chunks} "
                "chunks (connection cut or server failure); the partial reply was not used",
                retryable=True,
                kind="bad_reply",
            )
        calls = self._tool_calls()
        return build_turn(
            text=visible_text("".join(self._text), "".join(self._refusal)),
            reasoning="".join(self._reasoning) or None,
            calls=calls,
            finish=reason,
            usage=self._usage,
            raw=self.snapshot(),
            raw_message=self._wire_message(calls),
            provider=self._provider,
        )

    def snapshot(self) -> dict[str, Any]:
        """A compact record of what arrived so far, for journals (also after a failure)."""
        record: dict[str, Any] = dict(self._metadata)
        record.update(
            chunks=self._chunks,
            finish_reason=self._wire_finish_reason,
            usage=self._usage,
            message=self._wire_message(self._tool_calls()),
        )
        return record

    def _apply_choice(self, choice: dict[str, Any]) -> str:
        delta = choice.get("delta")
        visible = self._apply_delta(delta) if isinstance(delta, dict) else ""
        reason = non_empty(choice.get("finish_reason"))
        if reason:
            self._wire_finish_reason = reason
        return visible

    def _apply_delta(self, delta: dict[str, Any]) -> str:
        visible = ""
        content = delta.get("content")
        if isinstance(content, str):
            self._saw_content = True
            self._text.append(content)
            visible += content
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self._refusal.append(refusal)
            visible += refusal
        self._apply_reasoning(delta)
        tool_calls = delta.get("tool_calls")
        for entry in tool_calls if isinstance(tool_calls, list) else ():
            if isinstance(entry, dict):
                self._apply_tool_delta(entry)
        function_call = delta.get("function_call")
        if isinstance(function_call, dict) and function_call:
            self._legacy_call = self._legacy_call or _PartialCall(index=0)
            self._legacy_call.apply_function(function_call)
        return visible

    def _apply_reasoning(self, delta: dict[str, Any]) -> None:
        # vLLM sends the same text under both keys: take one key per delta, never both.
        for key in REASONING_KEYS:
            value = delta.get(key)
            if isinstance(value, str):
                self._reasoning_key = self._reasoning_key or key
                self._reasoning.append(value)
                return

    def _apply_tool_delta(self, entry: dict[str, Any]) -> None:
        index = _as_index(entry.get("index"))
        if index is None:
            index = self._index_without_wire_index(non_empty(entry.get("id")))
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PartialCall(index=index)
        call.apply(entry)
        self._last_index = index

    def _index_without_wire_index(self, wire_id: str) -> int:
        """Servers that omit ``index``: same id -> same call; new id -> new call; else last."""
        for call in self._calls.values():
            if wire_id and call.id == wire_id:
                return call.index
        if wire_id or self._last_index is None:
            return max(self._calls, default=-1) + 1
        return self._last_index

    def _tool_calls(self) -> tuple[ToolCall, ...]:
        partials = [self._calls[index] for index in sorted(self._calls)]
        if not partials and self._legacy_call is not None:
            partials = [self._legacy_call]
        return tuple(
            make_call(n, partial.id, partial.name, "".join(partial.fragments))
            for n, partial in enumerate(partials)
        )

    def _wire_message(self, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._text) if self._saw_content else None,
        }
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        if calls:
            message["tool_calls"] = [wire_call(call, call.arguments) for call in calls]
        if self._reasoning_key is not None:
            message[self._reasoning_key] = "".join(self._reasoning)
        return message

    def _remember_metadata(self, chunk: dict[str, Any]) -> None:
        for key in _METADATA_KEYS:
            value = chunk.get(key)
            if value is not None and key not in self._metadata:
                self._metadata[key] = value
        if chunk.get("timings") is not None:  # llama.cpp server speed figures
            self._metadata["timings"] = chunk["timings"]


def _raise_for_stream_error(chunk: dict[str, Any], provider: str) -> None:
    error = chunk.get("error")
    if error is None and chunk.get("object") == "error":
        error = chunk  # older vLLM: the error fields sit at the top level
    if error is not None:
        raise stream_error(provider, error)


def _as_index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


__all__ = ["StreamAccumulator"]
