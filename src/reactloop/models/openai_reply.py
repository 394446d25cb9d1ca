"""Chat Completions replies as ``ModelTurn`` values.

``parse_completion`` reads a non-streamed body (streams go through ``openai_stream``);
``finish_turn`` then recovers tool calls a server left in the text as ``<tool_call>`` blocks
(``hermes``) and marks an empty reply as a format error. Arguments stay the exact text the
model wrote; calls without a server id get a fresh one (``wire_id`` stays None).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import ModelTurn, ToolCall
from reactloop.models.openai_wire import REASONING_KEYS, parse_usage

FINISH_REASONS = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
}


def parse_completion(data: Any, *, provider: str) -> ModelTurn:
    """A non-streamed Chat Completions body as a ``ModelTurn``; raises ``ModelError``."""
    if not isinstance(data, Mapping):
        preview = " ".join(str(data).split())[:200]
        raise ModelError(f"{provider} returned a body that is not a chat completion: {preview!r}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        if data.get("error"):
            from reactloop.models.openai_errors import stream_error

            raise stream_error(provider, data["error"], where="reported an error")
        raise ModelError(f"{provider} returned a completion without choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise ModelError(f"{provider} returned a choice without a message")
    return turn_from_message(
        message, choice.get("finish_reason"), data.get("usage"), raw=data, provider=provider
    )


def turn_from_message(
    message: Mapping[str, Any],
    finish: Any,
    usage: Any,
    *,
    raw: Any,
    provider: str,
) -> ModelTurn:
    if finish == "insufficient_system_resource":
        raise ModelError(
            f"{provider} interrupted the reply (insufficient_system_resource)", retryable=True
        )
    wire_calls = message.get("tool_calls")
    wire_calls = wire_calls if isinstance(wire_calls, list) else []
    calls = tuple(_parse_call(call, n) for n, call in enumerate(wire_calls))
    turn = ModelTurn(
        text=content_text(message.get("content")),
        reasoning=reasoning_text(message),
        tool_calls=unique_ids(calls),
        finish_reason=map_finish(finish, has_calls=bool(calls)),  # type: ignore[arg-type]
        usage=parse_usage(usage),
        raw=raw,
        raw_message=dict(message),
    )
    return finish_turn(turn)


def finish_turn(turn: ModelTurn) -> ModelTurn:
    """Recover tool calls a server left in the text, and flag an empty reply."""
    if not turn.tool_calls and "<" in turn.text:
        recovered = recover_text_calls(turn)
        if recovered is not None:
            return recovered
    if not turn.tool_calls and not turn.text.strip() and turn.finish_reason in ("stop", "other"):
        return _replace(turn, format_error="the model returned an empty reply")
    return turn


def recover_text_calls(turn: ModelTurn) -> ModelTurn | None:
    """The turn with the calls written as ``<tool_call>`` text made real; None if there are none."""
    from reactloop.models.hermes import extract_tool_calls

    remaining, found = extract_tool_calls(turn.text)
    if found:
        calls = tuple(
            ToolCall(id=new_call_id(), name=name, arguments=arguments, wire_id=None)
            for name, arguments in found
        )
        finish = "length" if turn.finish_reason == "length" else "tool_calls"
        return _replace(turn, text=remaining, tool_calls=calls, finish_reason=finish)
    if "<tool_call" in turn.text.lower() and turn.finish_reason != "length":
        return _replace(
            turn,
            format_error="the reply has a <tool_call> block that could not be parsed; "
            'write <tool_call>{"name": ..., "arguments": {...}}</tool_call> or call the tool',
        )
    return None


def _replace(turn: ModelTurn, **changes: Any) -> ModelTurn:
    fields = {name: getattr(turn, name) for name in turn.__dataclass_fields__}
    fields.update(changes)
    return ModelTurn(**fields)


def _parse_call(call: Any, index: int) -> ToolCall:
    call = call if isinstance(call, Mapping) else {}
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, str):  # a lax server's object
        arguments = json.dumps(arguments, ensure_ascii=False, default=str)
    server_id = call.get("id")
    server_id = server_id if isinstance(server_id, str) and server_id else None
    return ToolCall(
        id=server_id or f"call_{index}",
        name=str(function.get("name") or ""),
        arguments=arguments or "",
        wire_id=server_id,
    )


def unique_ids(calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
    """Give calls without a server id a fresh one, and make ``id`` unique within the turn.

    ``wire_id`` keeps exactly what the server sent (None when it sent nothing usable).
    """
    seen: set[str] = set()
    result = []
    for n, call in enumerate(calls):
        new_id = call.id if call.wire_id else new_call_id()
        if new_id in seen:
            new_id = f"{new_id}#{n}"
        seen.add(new_id)
        result.append(call if new_id == call.id else ToolCall(**{**call.to_dict(), "id": new_id}))
    return tuple(result)


def new_call_id() -> str:
    """An id for a call the server gave none (echoed consistently once the loop stores it)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    return ""


def reasoning_text(message: Mapping[str, Any]) -> str | None:
    for key in REASONING_KEYS:
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def map_finish(finish: Any, *, has_calls: bool) -> str:
    mapped = "stop" if finish is None else FINISH_REASONS.get(str(finish), "other")
    if has_calls and mapped in ("stop", "other"):
        return "tool_calls"
    return mapped
