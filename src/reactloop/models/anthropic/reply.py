"""Messages API replies as ``ModelTurn`` values: the one meaning of a reply.

``parse_body`` reads a non-streamed reply into its message (a dict, as received); ``stream``
assembles a streamed reply into the same dict; ``turn_from_message`` makes the turn of either,
so both forms of one reply give equal turns. Here, and only here: the stop-reason map
(``STOP_REASONS``), the usage reader (``parse_usage``) and how a ``tool_use`` block becomes a
``ToolCall`` (``make_call``).

The turn's ``raw_message`` is ``{"role": "assistant", "content": [...]}`` with every block as
the server sent it (``thinking`` and ``redacted_thinking`` with their signatures, server-tool
blocks), so that the next request can send it back unchanged. The server's own tool searches
(a ``server_tool_use`` of a ``tool_search_tool_*`` and its ``tool_search_tool_result``) are
the turn's ``tool_searches`` (``server_searches``). Everything here raises only
``ModelError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import (
    FinishReason,
    ModelTurn,
    ServerToolSearch,
    ToolCall,
    Usage,
    count_of,
)
from reactloop.models.anthropic.errors import stream_error
from reactloop.models.http_errors import preview, reply_json
from reactloop.support import json_decode, json_encode

STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
PAUSE_TURN = "pause_turn"  # the server paused a long turn: send it back to continue
REFUSAL_NOTICE = "refusal"  # the kind of the run warning that says why the model refused
CONTEXT_FULL = "model_context_window_exceeded"


def parse_body(content: bytes, *, provider: str) -> dict[str, Any]:
    """A non-streamed reply body (bytes as received) as its message; errors are ``ModelError``."""
    data = reply_json(content, provider)
    if not isinstance(data, Mapping):
        raise ModelError(
            f"{provider} sent a reply that is not a message: {preview(content)}", kind="bad_reply"
        )
    if data.get("type") == "error":
        raise stream_error(provider, data.get("error"), where="reported an error")
    if not isinstance(data.get("content"), list):
        raise ModelError(
            f"{provider} sent a message without content: {preview(content)}", kind="bad_reply"
        )
    return dict(data)


def blocks_of(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [dict(block) for block in content if isinstance(block, Mapping)]


def is_paused(message: Mapping[str, Any]) -> bool:
    return message.get("stop_reason") == PAUSE_TURN


def turn_from_message(message: Mapping[str, Any], *, raw: Any, provider: str) -> ModelTurn:
    """The turn for a reply's message, streamed or not."""
    stop = message.get("stop_reason")
    if stop == CONTEXT_FULL:
        raise ModelError(
            f"{provider} stopped: the conversation filled the model's context window "
            f"({CONTEXT_FULL}, {parse_usage(message.get('usage')).input_tokens} input tokens)",
            kind="context_length",
        )
    blocks = blocks_of(message)
    calls = [make_call(n, block) for n, block in enumerate(_of_type(blocks, "tool_use"))]
    finish = map_stop(stop, has_calls=bool(calls))
    text = message_text(message)
    notices: tuple[tuple[str, str], ...] = ()
    if finish == "content_filter":
        reason = refusal_text(message)
        text = text if text.strip() else reason
        notices = ((REFUSAL_NOTICE, reason),)
    return ModelTurn(
        text=text,
        reasoning="\n\n".join(filter(None, _strings(_of_type(blocks, "thinking"), "thinking")))
        or None,
        tool_calls=tuple(calls),
        finish_reason=finish,
        usage=parse_usage(message.get("usage")),
        raw=raw,
        raw_message={"role": "assistant", "content": blocks},
        notices=notices,
        tool_searches=server_searches(blocks),
    )


def server_searches(blocks: Sequence[Mapping[str, Any]]) -> tuple[ServerToolSearch, ...]:
    """Each ``tool_search_tool_result`` with the query of the ``server_tool_use`` it answers:
    the tools it referenced, or its error code."""
    inputs = {
        block.get("id"): block.get("input")
        for block in _of_type(blocks, "server_tool_use")
        if str(block.get("name") or "").startswith("tool_search_tool_")
    }
    return tuple(
        _search(inputs[block.get("tool_use_id")], block.get("content"))
        for block in _of_type(blocks, "tool_search_tool_result")
        if block.get("tool_use_id") in inputs
    )


def _search(asked: Any, content: Any) -> ServerToolSearch:
    """One server search: its query (``query``, or a regex variant's ``pattern``), what it
    found, and its error code."""
    query = asked.get("query", asked.get("pattern")) if isinstance(asked, Mapping) else asked
    content = content if isinstance(content, Mapping) else {}
    references = content.get("tool_references")
    found = [
        ref["tool_name"]
        for ref in (references if isinstance(references, list) else [])
        if isinstance(ref, Mapping) and isinstance(ref.get("tool_name"), str)
    ]
    error = content.get("error_code") if "tool_references" not in content else None
    return ServerToolSearch(
        query=query if isinstance(query, str) else "",
        found=tuple(found),
        error=None if error is None else str(error),
    )


def message_text(message: Mapping[str, Any]) -> str:
    """The text blocks of a message, joined (citations split one text into several blocks)."""
    return "".join(_strings(_of_type(blocks_of(message), "text"), "text"))


def map_stop(stop: Any, *, has_calls: bool) -> FinishReason:
    """The neutral finish reason; calls without a ``tool_use`` stop still make a call turn."""
    mapped = "stop" if stop is None else STOP_REASONS.get(stop if isinstance(stop, str) else "")
    finish: FinishReason = mapped or "other"
    if has_calls and finish in ("stop", "other"):
        return "tool_calls"
    return finish


def make_call(index: int, block: Mapping[str, Any]) -> ToolCall:
    """A ``tool_use`` block as a call: the server's id, else ``call_<index>``."""
    server_id = _non_empty(block.get("id"))
    return ToolCall(
        id=server_id or f"call_{index}",
        name=_non_empty(block.get("name")),
        arguments=arguments_text(block.get("input")),
        wire_id=server_id,
    )


def arguments_text(value: Any) -> str:
    """A tool input as argument text; a str is input a stream cut off (kept as streamed)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "{}"
    try:
        return json_encode.safe_dumps(value)
    except json_decode.JSONRefused as exc:
        raise ModelError(f"a tool input that cannot be read: {exc}", kind="bad_reply") from None


def refusal_text(message: Mapping[str, Any]) -> str:
    """Why the model refused (``stop_details``), for the record of a refused turn."""
    details = message.get("stop_details")
    details = details if isinstance(details, Mapping) else {}
    explanation = _non_empty(details.get("explanation"))
    category = _non_empty(details.get("category"))
    kind = f" ({category})" if category else ""
    return f"the model refused{kind}: {explanation}" if explanation else f"the model refused{kind}"


def parse_usage(usage: Any) -> Usage:
    """Token counts of a ``usage`` object; cache reads and writes are counted as input.

    Anthropic's ``input_tokens`` leaves out ``cache_creation_input_tokens`` and
    ``cache_read_input_tokens``; ``Usage.input_tokens`` counts the whole prompt, as for every
    other provider, ``cached_tokens`` the part read from the cache and ``cache_write_tokens``
    the part written to it.
    """
    if not isinstance(usage, Mapping):
        return Usage()
    read = count_of(usage, "cache_read_input_tokens")
    written = count_of(usage, "cache_creation_input_tokens")
    return Usage(
        input_tokens=count_of(usage, "input_tokens") + written + read,
        output_tokens=count_of(usage, "output_tokens"),
        cached_tokens=read,
        cache_write_tokens=written,
    )


def cache_counts(usage: Any) -> tuple[int, int]:
    """``(cache writes, cache reads)`` of a ``usage`` object."""
    return count_of(usage, "cache_creation_input_tokens"), count_of(
        usage, "cache_read_input_tokens"
    )


def _of_type(blocks: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [block for block in blocks if block.get("type") == kind]


def _strings(blocks: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    return [block[key] for block in blocks if isinstance(block.get(key), str)]


def _non_empty(value: Any) -> str:
    return value if isinstance(value, str) and value else ""


def merge_messages(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The replies of one paused and continued turn as one message: all blocks, summed usage."""
    merged = dict(messages[-1])
    merged["content"] = [block for message in messages for block in blocks_of(message)]
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    merged["usage"] = {key: sum(count_of(m.get("usage"), key) for m in messages) for key in keys}
    return merged
