"""Chat Completions replies as ``ModelTurn`` values: the one meaning of a reply.

``parse_body`` and ``parse_completion`` read a non-streamed reply; ``stream`` assembles a
streamed one and finishes it with ``build_turn`` too, so both forms of the same reply give equal
turns. Here, and only here: the finish-reason map (``FINISH_REASONS``), the usage reader
(``parse_usage``, with ``messages.count_of``), the reasoning fields (``REASONING_KEYS``) and
how a wire call becomes a ``ToolCall`` (``make_call``) and back (``wire_call``).
``finish_turn`` recovers tool calls a server left in the text as ``<tool_call>`` blocks
(``hermes``) and marks an empty reply as a format error.

Arguments stay the exact text the model wrote. A call keeps the server's id as ``wire_id``
(``""`` when it sent none) and gets ``call_<n>`` (its position) as ``id`` when it has none:
making ids unique in the run is the loop's job. Everything here raises only ``ModelError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import FinishReason, ModelTurn, ToolCall, Usage, count_of
from reactloop.models.http_errors import reply_json
from reactloop.models.openai.errors import stream_error
from reactloop.models.openai.hermes import extract_tool_calls
from reactloop.support import json_decode, json_encode

REASONING_KEYS = ("reasoning_content", "reasoning")
FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}
# The server gave up on this generation (DeepSeek, vLLM, TGI-style servers): the reply is not
# an answer, and trying again may work.
FAILED_FINISH_REASONS = frozenset({"insufficient_system_resource", "error", "abort"})


def parse_body(content: bytes, *, provider: str) -> ModelTurn:
    """A non-streamed reply body (bytes as received) as a ``ModelTurn``."""
    return parse_completion(reply_json(content, provider), provider=provider)


def parse_completion(data: Any, *, provider: str) -> ModelTurn:
    """A decoded non-streamed Chat Completions body as a ``ModelTurn``."""
    if not isinstance(data, Mapping):
        raise ModelError(
            f"{provider} returned a body that is not a chat completion: {describe(data)}",
            kind="bad_reply",
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        if data.get("error"):
            raise stream_error(provider, data["error"], where="reported an error")
        raise ModelError(f"{provider} returned a completion without choices", kind="bad_reply")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise ModelError(f"{provider} returned a choice without a message", kind="bad_reply")
    wire_calls = message.get("tool_calls")
    wire_calls = wire_calls if isinstance(wire_calls, list) else []
    legacy = message.get("function_call")  # the pre-tools form, used only without tool_calls
    if not wire_calls and isinstance(legacy, Mapping) and legacy:
        wire_calls = [{"function": legacy}]
    calls = [make_call(n, *_call_parts(call)) for n, call in enumerate(wire_calls)]
    return build_turn(
        text=visible_text(content_text(message.get("content")), message.get("refusal")),
        reasoning=reasoning_text(message),
        calls=calls,
        finish=choice.get("finish_reason"),
        usage=data.get("usage"),
        raw=data,
        raw_message=dict(message),
        provider=provider,
    )


def build_turn(
    *,
    text: str,
    reasoning: str | None,
    calls: Sequence[ToolCall],
    finish: Any,
    usage: Any,
    raw: Any,
    raw_message: Any,
    provider: str,
) -> ModelTurn:
    """The turn for a reply's parts, streamed or not; a failed generation is a ``ModelError``."""
    if isinstance(finish, str) and finish in FAILED_FINISH_REASONS:
        raise ModelError(
            f"{provider} interrupted the reply ({finish})", retryable=True, kind="bad_reply"
        )
    turn = ModelTurn(
        text=text,
        reasoning=reasoning,
        tool_calls=tuple(calls),
        finish_reason=map_finish(finish, has_calls=bool(calls)),
        usage=parse_usage(usage),
        raw=raw,
        raw_message=raw_message,
    )
    return finish_turn(turn)


def finish_turn(turn: ModelTurn) -> ModelTurn:
    """Recover tool calls a server left in the text, and flag an empty reply."""
    if not turn.tool_calls and "<" in turn.text:
        recovered = recover_text_calls(turn)
        if recovered is not None:
            return recovered
    if not turn.tool_calls and not turn.text.strip() and turn.finish_reason in ("stop", "other"):
        return dataclasses.replace(turn, format_error="the model returned an empty reply")
    return turn


def recover_text_calls(turn: ModelTurn) -> ModelTurn | None:
    """The turn with the calls written as ``<tool_call>`` text made real; None if there are none."""
    remaining, found = extract_tool_calls(turn.text)
    if found:
        calls = tuple(make_call(n, "", name, text) for n, (name, text) in enumerate(found))
        finish: FinishReason = "length" if turn.finish_reason == "length" else "tool_calls"
        return dataclasses.replace(turn, text=remaining, tool_calls=calls, finish_reason=finish)
    if "<tool_call" in turn.text.lower() and turn.finish_reason != "length":
        return dataclasses.replace(
            turn,
            format_error="the reply has a <tool_call> block that could not be parsed; "
            'write <tool_call>{"name": ..., "arguments": {...}}</tool_call> or call the tool',
        )
    return None


def make_call(index: int, server_id: str, name: str, arguments: str) -> ToolCall:
    """The call at ``index`` of a reply: the server's id, else ``call_<index>``."""
    return ToolCall(
        id=server_id or f"call_{index}", name=name, arguments=arguments, wire_id=server_id
    )


def wire_call(call: ToolCall, arguments: str) -> dict[str, Any]:
    """``call`` in the wire form, with the id echoed back (``ToolCall.echo_id``)."""
    function = {"name": call.name, "arguments": arguments}
    return {"id": call.echo_id, "type": "function", "function": function}


def _call_parts(call: Any) -> tuple[str, str, str]:
    call = call if isinstance(call, Mapping) else {}
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    name = non_empty(function.get("name"))
    return non_empty(call.get("id")), name, arguments_text(function.get("arguments"))


def arguments_text(value: Any) -> str:
    """Arguments as sent: text as is, an object from a lax server encoded, nothing as ``""``."""
    if value is None or isinstance(value, str):
        return value or ""
    try:
        return json_encode.safe_dumps(value)
    except json_decode.JSONRefused as exc:
        raise ModelError(
            f"tool call arguments that cannot be read: {exc}", kind="bad_reply"
        ) from None


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def visible_text(text: str, refusal: Any) -> str:
    """The reply's text; a refusal (OpenAI's ``refusal`` field) when there is no other."""
    if text.strip() or not isinstance(refusal, str):
        return text
    return refusal or text


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    for key in REASONING_KEYS:
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def map_finish(finish: Any, *, has_calls: bool) -> FinishReason:
    """The neutral finish reason; a server that says ``stop`` after tool calls made calls."""
    mapped = "stop" if finish is None else FINISH_REASONS.get(non_empty(finish), "other")
    if has_calls and mapped in ("stop", "other"):
        return "tool_calls"
    return mapped


def parse_usage(usage: Any) -> Usage:
    """Token counts of a ``usage`` object (OpenAI details, DeepSeek cache fields), 0 if absent."""
    if not isinstance(usage, Mapping):
        return Usage()
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    cached = count_of(prompt_details, "cached_tokens")
    return Usage(
        input_tokens=count_of(usage, "prompt_tokens"),
        output_tokens=count_of(usage, "completion_tokens"),
        cached_tokens=cached or count_of(usage, "prompt_cache_hit_tokens"),
        reasoning_tokens=count_of(completion_details, "reasoning_tokens"),
    )


def non_empty(value: Any) -> str:
    return value if isinstance(value, str) and value else ""


def describe(value: Any) -> str:
    """The start of a value for a message, never a deep ``repr`` (which may recurse)."""
    try:
        text = json_encode.safe_dumps(value)
    except json_decode.JSONRefused:
        return f"(a {type(value).__name__} that cannot be shown)"
    return repr(" ".join(text[:400].split())[:200])
