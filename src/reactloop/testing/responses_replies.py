"""Scripted replies for ``FakeResponsesServer``: ``response`` objects, their event streams, errors.

``response(...)`` builds a body (text, calls, reasoning, refusal, ``incomplete``); the fault
menu is made of it: a malformed argument text, an unknown tool's name, ``cut_off_call`` (a
call cut at the output limit), ``refusal``, ``failed_response``, ``responses_error(429,
retry_after=1)``, ``responses_error(500)``; ``response_events`` is the streamed form of a
body, and ``response_stream(body, cut_mid_item=True)`` a stream that breaks off inside an item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.testing.openai_replies import Reply, error_reply, json_reply, sse_text_reply

Item = dict[str, Any]
TERMINAL = {"completed": "response.completed", "incomplete": "response.incomplete"}


def function_call(
    name: str, arguments: Any = None, *, call_id: str | None = None, status: str = "completed"
) -> Item:
    """A ``function_call`` item; ``arguments`` is a dict (encoded) or the exact text."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    item: Item = {"type": "function_call", "name": name, "arguments": text, "status": status}
    if call_id is not None:
        item["call_id"] = call_id
    return item


def reasoning_item(summary: str = "", *, encrypted_content: str | None = None) -> Item:
    """A ``reasoning`` item with a summary and (as ``include`` asks) its encrypted content."""
    parts = [{"type": "summary_text", "text": summary}] if summary else []
    return {"type": "reasoning", "summary": parts, "encrypted_content": encrypted_content}


def response(
    text: str | None = None,
    *,
    calls: Iterable[Mapping[str, Any]] = (),
    reasoning: Sequence[Mapping[str, Any]] = (),
    refusal: str | None = None,
    status: str = "completed",
    incomplete: str | None = None,
    usage: Mapping[str, Any] | None = None,
    id: str | None = None,
    model: str = "fake-model",
) -> dict[str, Any]:
    """A ``response`` body; items get ids and calls ``call_<n>`` where they have none."""
    output: list[Item] = [{"id": f"rs_{n}", **r} for n, r in enumerate(reasoning)]
    if text is not None or refusal is not None:
        content: list[Item] = []
        if text is not None:
            content.append({"type": "output_text", "text": text, "annotations": []})
        if refusal is not None:
            content.append({"type": "refusal", "refusal": refusal})
        item_status = "incomplete" if status == "incomplete" and not calls else "completed"
        output.append(
            {"type": "message", "id": "msg_0", "status": item_status, "role": "assistant",
             "content": content}
        )  # fmt: skip
    for n, call in enumerate(calls):
        output.append({"id": f"fc_{n}", "call_id": f"call_{n}", **call})
    body: dict[str, Any] = {
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "usage": dict(usage or _usage()),
    }
    if id is not None:
        body["id"] = id
    return body


# What a real response echoes of its request, with the API's value when the request left it
# out (tests/wire_formats/responses/openai_*.json; the Open Responses specification requires
# every one of them, with ``completed_at`` and the two penalties).
REQUEST_ECHO: dict[str, Any] = {
    "background": False,
    "frequency_penalty": 0.0,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "presence_penalty": 0.0,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
}


def with_request_fields(body: Mapping[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """``body`` with every field a real response has that it lacks: the request's own value
    (its tools, instructions, temperature...) or the API's default, and ``completed_at``."""
    full = dict(body)
    for name, default in REQUEST_ECHO.items():
        if name not in full:
            given = request.get(name)
            full[name] = given if given is not None else json.loads(json.dumps(default))
    if "completed_at" not in full:
        done = full.get("status") == "completed"
        full["completed_at"] = full.get("created_at", 0) if done else None
    return full


def cut_off_call(name: str, partial_arguments: str = '{"expression": "2 +') -> dict[str, Any]:
    """A call cut at the output limit: ``incomplete`` / ``max_output_tokens``."""
    call = function_call(name, partial_arguments, status="incomplete")
    return response(calls=[call], status="incomplete", incomplete="max_output_tokens")


def refusal(reason: str = "I can't help with that.") -> dict[str, Any]:
    return response(refusal=reason)


def failed_response(code: str = "server_error", message: str = "The model failed.") -> Item:
    body = response()
    return {**body, "status": "failed", "output": [], "error": {"code": code, "message": message}}


def responses_error(
    status: int,
    message: str = "fake error",
    *,
    code: str | None = None,
    retry_after: float | None = None,
) -> Reply:
    """An HTTP error with OpenAI's error body (``retry_after``: the ``retry-after`` header)."""
    kinds = {429: "rate_limit_exceeded", 400: "invalid_request_error"}
    error = {"message": message, "type": kinds.get(status, "server_error"), "param": None,
             "code": code}  # fmt: skip
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    return error_reply(status, {"error": error}, headers=headers)


def response_events(body: Mapping[str, Any]) -> list[Item]:
    """The events a server streams for ``body``, in order (``sequence_number`` included)."""
    shell = {**body, "status": "in_progress", "output": [], "usage": None}
    if "completed_at" in shell:
        shell["completed_at"] = None
    events: list[Item] = [{"type": "response.created", "response": shell}]
    for index, item in enumerate(body.get("output") or []):
        events.extend(_item_events(index, dict(item)))
    status = str(body.get("status"))
    events.append({"type": TERMINAL.get(status, "response.failed"), "response": dict(body)})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def _item_events(index: int, item: Item) -> list[Item]:
    where = {"output_index": index, "item_id": item.get("id")}
    opened = {**item, "status": "in_progress"}
    events: list[Item] = []
    kind = item.get("type")
    if kind == "function_call":
        opened["arguments"] = ""
        events.extend(
            {"type": "response.function_call_arguments.delta", **where, "delta": piece}
            for piece in _pieces(str(item.get("arguments") or ""))
        )
        done_kind = "response.function_call_arguments.done"
        events.append({"type": done_kind, **where, "arguments": item.get("arguments")})
    elif kind == "message":
        opened["content"] = []
        for number, part in enumerate(item.get("content") or []):
            events.extend(_part_events(where, number, part))
    elif kind == "reasoning":
        opened["summary"], opened["encrypted_content"] = [], None
        for number, part in enumerate(item.get("summary") or []):
            at = {**where, "summary_index": number}
            events.extend(
                {"type": "response.reasoning_summary_text.delta", **at, "delta": piece}
                for piece in _pieces(part.get("text", ""))
            )
    added = {"type": "response.output_item.added", "output_index": index, "item": opened}
    done = {"type": "response.output_item.done", "output_index": index, "item": item}
    return [added, *events, done]


def _part_events(where: Item, number: int, part: Mapping[str, Any]) -> list[Item]:
    refused = part.get("type") == "refusal"
    text = str(part.get("refusal" if refused else "text") or "")
    kind = "response.refusal" if refused else "response.output_text"
    at = {**where, "content_index": number, **({} if refused else {"logprobs": []})}
    events: list[Item] = [{"type": "response.content_part.added", **at, "part": dict(part)}]
    events.extend({"type": f"{kind}.delta", **at, "delta": piece} for piece in _pieces(text))
    events.append({"type": f"{kind}.done", **at, ("refusal" if refused else "text"): text})
    events.append({"type": "response.content_part.done", **at, "part": dict(part)})
    return events


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[n : n + size] for n in range(0, len(text), size)] or [""]


def sse_events(events: Iterable[Mapping[str, Any]]) -> str:
    """Events as SSE text, each with its ``event:`` line, as OpenAI sends them."""
    return "".join(f"event: {e.get('type')}\ndata: {json.dumps(e)}\n\n" for e in events)


def response_stream(body: Mapping[str, Any], *, cut_mid_item: bool = False) -> Reply:
    """The streamed form of ``body``; ``cut_mid_item``: the connection drops inside its
    first item (after the item's first delta), before any terminal event."""
    events = response_events(body)
    if not cut_mid_item:
        return sse_text_reply(sse_events(events))
    first_delta = next(n for n, e in enumerate(events) if str(e["type"]).endswith(".delta"))
    return sse_text_reply(sse_events(events), break_after=first_delta + 1)


def as_body(item: Reply | Mapping[str, Any] | str) -> Reply | dict[str, Any]:
    """A script item as a reply, or as a body to send as JSON or as a stream."""
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return response(item)
    return dict(item)


def responses_fixture_replies(path: str | Path) -> list[Reply]:
    """Replies from a recorded file of ``tests/wire_formats/responses/``: ``error_*.json`` ->
    that error, ``.json`` -> the body, ``.jsonl`` -> its events as a stream, ``.sse`` as is."""
    path = Path(path)
    raw = path.read_text()
    if path.suffix == ".sse":
        return [sse_text_reply(raw)]
    if path.suffix == ".jsonl":
        return [sse_text_reply(sse_events(json.loads(line) for line in raw.splitlines() if line))]
    data = json.loads(raw)
    if path.name.startswith("error_"):
        return [error_reply(data["status"], data["body"], headers=data.get("headers"))]
    return [json_reply(data)]


def _usage(input_tokens: int = 10, output_tokens: int = 5) -> Item:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
