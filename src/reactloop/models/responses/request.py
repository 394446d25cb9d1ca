"""The ``/responses`` request: the neutral history as input items, the tools, the tool choice.

- leading system messages become ``instructions``; a later one is a ``system`` message item.
- an assistant message this adapter parsed (``Message.raw`` = ``{"response_id", "output"}``)
  is echoed as the output items the server sent, reasoning items with their
  ``encrypted_content``, so that a reasoning model keeps its chain across tool calls while the
  server stores nothing (``store: false``); a reasoning item with neither
  ``encrypted_content`` nor ``content`` is left out (OpenAI cannot find it unstored, and
  llama-server refuses it: *"item['content'] is not an array"*). Its ``function_call`` items
  carry the neutral calls' ids, names and argument text (arguments that are not a JSON object
  become ``"{}"``, as for chat). Any other assistant message is rendered from its text and calls.
- every ``function_call`` gets exactly one ``function_call_output`` right after its
  assistant's items, in call order: results are moved up, a call never answered gets a "not
  executed" result, and a result answering no call becomes a user note (the chat rules, in
  ``models/openai/request.py``, whose constants are shared).
- harness notes and the task are ``user`` message items.
- deferred tools (``ModelRequest.deferred``) are sent with ``defer_loading: true`` and the
  hosted ``tool_search`` tool; the server's ``tool_search_call`` and ``tool_search_output``
  items are echoed with the turn's other items, so the tools it loaded stay loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import Message, ToolCall, ToolSpec
from reactloop.models.openai.request import HARNESS_KINDS, NOT_EXECUTED, safe_arguments
from reactloop.models.schemas.dialects import schema_for

Item = dict[str, Any]
SEARCH_ITEMS = ("tool_search_call", "tool_search_output")  # the server's own tool search


def render_input(messages: Sequence[Message]) -> tuple[str | None, list[Item]]:
    """``(instructions, input items)`` for a whole history (see the module docstring)."""
    lead = 0
    while lead < len(messages) and messages[lead].role == "system" and not messages[lead].kind:
        lead += 1
    instructions = "\n\n".join(m.content for m in messages[:lead]) or None
    return instructions, render_items(messages[lead:])


def render_items(messages: Sequence[Message]) -> list[Item]:
    """The input items of ``messages``, each call paired with exactly one output."""
    items: list[Item] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role != "assistant" or message.kind in HARNESS_KINDS:
            items.append(render_plain(message))
            index += 1
            continue
        end = index + 1
        while end < len(messages) and messages[end].role != "assistant":
            end += 1
        items.extend(_answered_unit(messages[index:end]))
        index = end
    return items


def render_plain(message: Message) -> Item:
    """A message that is not an assistant turn: a user, system or orphan note item."""
    if message.role == "tool":
        return _orphan_note(message)
    role = "system" if message.role == "system" and not message.kind else "user"
    return {"role": role, "content": message.content}


def _answered_unit(messages: Sequence[Message]) -> list[Item]:
    """An assistant's items, one output per call in call order, then the other messages."""
    assistant = messages[0]
    calls = assistant.tool_calls
    ids = {call.id for call in calls} | {call.echo_id for call in calls}
    results: dict[str, list[Message]] = {}
    others: list[Item] = []
    for message in messages[1:]:
        if message.role == "tool" and message.tool_call_id in ids:
            results.setdefault(message.tool_call_id or "", []).append(message)
        else:
            others.append(render_plain(message))
    items = assistant_items(assistant)
    for call in calls:
        answers = results.get(call.id) or results.get(call.echo_id) or []
        output = answers.pop(0).content if answers else NOT_EXECUTED
        items.append({"type": "function_call_output", "call_id": call.echo_id, "output": output})
    leftovers = [_orphan_note(m) for answers in results.values() for m in answers]
    return items + leftovers + others


def assistant_items(message: Message) -> list[Item]:
    """The items of one assistant turn: echoed from its output items, else from its parts."""
    output = echoed_output(message)
    if output is None:
        return _neutral_items(message)
    items: list[Item] = []
    calls = iter(message.tool_calls)
    for item in output:
        kind = item.get("type")
        if kind == "function_call":
            items.append({**item, **_call_fields(next(calls))})
        elif kind in SEARCH_ITEMS or (
            kind == "reasoning" and (item.get("encrypted_content") or item.get("content"))
        ):
            items.append({k: v for k, v in item.items() if v is not None})
        elif kind == "message":
            items.append(dict(item))
    return items


def echoed_output(message: Message) -> list[Mapping[str, Any]] | None:
    """The output items to echo for ``message``; None when it has none that match its calls."""
    raw = message.raw
    output = raw.get("output") if isinstance(raw, Mapping) else None
    if not isinstance(output, list) or not all(isinstance(i, Mapping) for i in output):
        return None
    if sum(1 for i in output if i.get("type") == "function_call") != len(message.tool_calls):
        return None  # calls recovered from text, or a history edited by hand
    return output


def response_id(message: Message) -> str | None:
    """The id of the response an assistant message came from (``--server-state``)."""
    raw = message.raw
    found = raw.get("response_id") if isinstance(raw, Mapping) else None
    return found if isinstance(found, str) and found else None


def _neutral_items(message: Message) -> list[Item]:
    items: list[Item] = []
    if message.content:
        items.append({"role": "assistant", "content": message.content})
    items.extend({"type": "function_call", **_call_fields(call)} for call in message.tool_calls)
    return items


def _call_fields(call: ToolCall) -> Item:
    return {
        "call_id": call.echo_id,
        "name": call.name,
        "arguments": safe_arguments(call.arguments),
    }


def _orphan_note(message: Message) -> Item:
    return {"role": "user", "content": f"[result of an earlier tool call] {message.content}"}


def render_tools(tools: Sequence[ToolSpec], deferred: frozenset[str] = frozenset()) -> list[Item]:
    """Function tools; ``strict`` is off (the Responses API's default is on, which refuses
    any schema with an optional property), the arguments are validated by the run. Those
    named in ``deferred`` get ``defer_loading``, and the hosted ``tool_search`` comes last."""
    rendered: list[Item] = []
    for spec in tools:
        tool: Item = {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": schema_for(spec, "openai") or {"type": "object", "properties": {}},
            "strict": False,
        }
        if spec.name in deferred:
            tool["defer_loading"] = True
        rendered.append(tool)
    if any(spec.name in deferred for spec in tools):
        rendered.append({"type": "tool_search"})
    return rendered


def render_tool_choice(choice: str, tools: Sequence[ToolSpec]) -> str | Item | None:
    """The wire ``tool_choice``; None (no tools) means "leave it out"."""
    if not tools:
        return None
    if choice in ("auto", "none", "required"):
        return choice
    if choice not in {spec.name for spec in tools}:
        names = ", ".join(spec.name for spec in tools)
        raise ModelError(f"tool_choice {choice!r} is not one of the tools ({names})")
    return {"type": "function", "name": choice}


def journal_entry(body: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The request for the journal, without the input items and tools ``previous`` (the body
    of this history's previous request) already recorded (linear journals)."""
    items = body.get("input") or []
    entry = {k: v for k, v in body.items() if k not in ("input", "tools")}
    entry["n_items"] = len(items)
    before = previous.get("input") if previous is not None else None
    if isinstance(before, list) and before and items[: len(before)] == before:
        entry["new_input"] = items[len(before) :]
        if body.get("tools") != previous.get("tools"):  # type: ignore[union-attr]
            entry["tools"] = body.get("tools")
    else:
        entry["input"] = items
        entry["tools"] = body.get("tools")
    return entry
