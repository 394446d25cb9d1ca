"""Responses API replies as ``ModelTurn`` values: the one meaning of a ``response`` object.

``parse_body`` reads a non-streamed body; ``stream.ResponseStream`` assembles a streamed one
into the same ``response`` object and finishes it here too, so both forms give equal turns.
Here, and only here, for this protocol: the status table (``finish_of``), the usage reader
(``parse_usage``) and how an output item becomes a call, text or reasoning.

    status       incomplete_details.reason   finish reason
    completed    -                           tool_calls with calls, else stop
    completed    (a ``refusal`` part only)   content_filter, the refusal as text and a notice
    incomplete   max_output_tokens           length (a cut-off call is never run)
    incomplete   content_filter              content_filter
    incomplete   anything else               other
    failed       -                           ModelError from the ``error`` object
    cancelled, queued, in_progress           ModelError (nothing to act on)

A ``function_call`` item keeps its ``call_id`` as the call's ``wire_id``; the item's
``status: "incomplete"`` makes the turn ``length`` even under ``completed``. ``raw_message`` is
``{"response_id", "output"}``: the output items as sent (reasoning items with their
``encrypted_content``), which ``request.py`` echoes back. A ``tool_search_call`` and its
``tool_search_output`` (the server's search of the deferred tools) are one of the turn's
``tool_searches``. Everything here raises only ``ModelError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import FinishReason, ModelTurn, ServerToolSearch, ToolCall, Usage
from reactloop.models.http_errors import reply_json
from reactloop.models.openai.errors import stream_error
from reactloop.models.openai.reply import (
    arguments_text,
    describe,
    finish_turn,
    make_call,
    non_empty,
)
from reactloop.models.openai.reply import parse_usage as parse_chat_usage
from reactloop.support import json_encode

REFUSAL_NOTICE = "refusal"  # the kind of the run warning that says why the model refused
INCOMPLETE_REASONS: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
}
NOT_FINISHED = frozenset({"queued", "in_progress", "cancelled"})


def parse_body(content: bytes, *, provider: str) -> ModelTurn:
    """A non-streamed reply body (bytes as received) as a ``ModelTurn``."""
    return parse_response(reply_json(content, provider), provider=provider)


def parse_response(data: Any, *, provider: str, raw: Any = None) -> ModelTurn:
    """A decoded ``response`` object as a ``ModelTurn`` (``raw``: what to journal instead)."""
    if not isinstance(data, Mapping):
        raise ModelError(
            f"{provider} returned a body that is not a response: {describe(data)}",
            kind="bad_reply",
        )
    status = data.get("status")
    if status == "failed" or (status is None and data.get("error")):
        raise stream_error(provider, data.get("error") or "no error object", where="failed")
    if status in NOT_FINISHED:
        raise ModelError(
            f"{provider} returned a response that is {status}, not finished", kind="bad_reply"
        )
    items = [item for item in _list(data.get("output")) if isinstance(item, Mapping)]
    calls = tuple(_call(n, item) for n, item in enumerate(_of_type(items, "function_call")))
    text, refusal = message_text(items)
    finish = finish_of(data, items, has_calls=bool(calls))
    notices: tuple[tuple[str, str], ...] = ()
    if refusal and not text.strip():
        finish, text = "content_filter", refusal
    if finish == "content_filter":
        notices = ((REFUSAL_NOTICE, f"the model refused: {refusal or _reason(data)}"),)
    turn = ModelTurn(
        text=text,
        reasoning=reasoning_text(items),
        tool_calls=calls,
        finish_reason=finish,
        usage=parse_usage(data.get("usage")),
        raw=data if raw is None else raw,
        raw_message={"response_id": non_empty(data.get("id")), "output": [dict(i) for i in items]},
        notices=notices,
        tool_searches=server_searches(items),
    )
    return finish_turn(turn)  # calls left in the text recovered, an empty reply flagged


def server_searches(items: Iterable[Mapping[str, Any]]) -> tuple[ServerToolSearch, ...]:
    """Each ``tool_search_output`` with the ``tool_search_call`` it answers (by ``call_id``,
    else the one before it): the call's arguments and the names of the tools it loaded."""
    searches: list[ServerToolSearch] = []
    asked: dict[Any, Any] = {}
    last: Any = None
    for item in _of_type(items, "tool_search_call", "tool_search_output"):
        if item.get("type") == "tool_search_call":
            last = asked[item.get("call_id")] = item.get("arguments")
            continue
        arguments = asked.get(item.get("call_id"), last) if item.get("call_id") else last
        query = arguments.get("query") if isinstance(arguments, Mapping) else arguments
        if not isinstance(query, str):
            query = json_encode.dumps(arguments) if arguments is not None else ""
        searches.append(ServerToolSearch(query=query, found=tuple(_loaded(item.get("tools")))))
    return tuple(searches)


def _loaded(tools: Any) -> list[str]:
    """The function names among loaded tools (a namespace's tools included)."""
    names: list[str] = []
    for tool in _list(tools):
        if isinstance(tool, Mapping) and tool.get("type") == "namespace":
            names += _loaded(tool.get("tools"))
        elif isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            names.append(tool["name"])
    return names


def finish_of(data: Mapping[str, Any], items: Iterable[Any], *, has_calls: bool) -> FinishReason:
    """The neutral finish reason of a finished response (see the module's table)."""
    if data.get("status") == "incomplete":
        return INCOMPLETE_REASONS.get(_reason(data), "other")
    cut = any(
        item.get("status") == "incomplete" for item in _of_type(items, "function_call", "message")
    )
    if cut:
        return "length"
    return "tool_calls" if has_calls else "stop"


def _reason(data: Mapping[str, Any]) -> str:
    details = data.get("incomplete_details")
    return non_empty(details.get("reason")) if isinstance(details, Mapping) else ""


def _call(index: int, item: Mapping[str, Any]) -> ToolCall:
    call_id = non_empty(item.get("call_id")) or non_empty(item.get("id"))
    return make_call(
        index, call_id, non_empty(item.get("name")), arguments_text(item.get("arguments"))
    )


def message_text(items: Iterable[Mapping[str, Any]]) -> tuple[str, str]:
    """The ``output_text`` and the ``refusal`` parts of the assistant messages, each joined."""
    texts: list[str] = []
    refusals: list[str] = []
    for item in _of_type(items, "message"):
        for part in _list(item.get("content")):
            if not isinstance(part, Mapping):
                continue
            if part.get("type") == "refusal":
                refusals.append(non_empty(part.get("refusal")))
            elif part.get("type") in ("output_text", "text"):
                texts.append(non_empty(part.get("text")))
    return "".join(texts), "".join(refusals)


def reasoning_text(items: Iterable[Mapping[str, Any]]) -> str | None:
    """The reasoning summaries (else the raw reasoning text) of the reasoning items."""
    shown: list[str] = []
    for item in _of_type(items, "reasoning"):
        parts = _list(item.get("summary")) or _list(item.get("content"))
        shown.extend(
            part["text"]
            for part in parts
            if isinstance(part, Mapping) and isinstance(part.get("text"), str) and part["text"]
        )
    return "\n\n".join(shown) or None


def parse_usage(usage: Any) -> Usage:
    """Token counts of a Responses ``usage`` (the chat reader's rules: 0 for what is odd);
    ``input_tokens_details.cache_write_tokens`` is the part written to the prompt cache."""
    if not isinstance(usage, Mapping):
        return Usage()
    details = usage.get("input_tokens_details")
    written = details.get("cache_write_tokens") if isinstance(details, Mapping) else None
    counted = parse_chat_usage(
        {
            "prompt_tokens": usage.get("input_tokens"),
            "completion_tokens": usage.get("output_tokens"),
            "prompt_tokens_details": details,
            "completion_tokens_details": usage.get("output_tokens_details"),
        }
    )
    write = parse_chat_usage({"prompt_tokens": written}).input_tokens
    return dataclasses.replace(counted, cache_write_tokens=write) if write else counted


def _of_type(items: Iterable[Any], *kinds: str) -> list[Mapping[str, Any]]:
    return [item for item in items if isinstance(item, Mapping) and item.get("type") in kinds]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
