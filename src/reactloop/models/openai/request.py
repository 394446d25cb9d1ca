"""The ``/chat/completions`` request: neutral messages as wire messages, tools, the body.

Rendering keeps what the server sent and repairs only what would make the next request fail:

- an assistant message is echoed from the wire message it came from (``Message.raw``): the
  same content, ids, names and argument text; ``null`` content becomes ``""``; arguments that
  are not a JSON object become ``"{}"`` (vLLM, llama-server and SGLang reject the whole
  conversation with HTTP 400 otherwise); ``reasoning_content`` / ``reasoning`` stay on
  tool-call turns (DeepSeek and Qwen thinking modes require them there).
- a call without a server id gets the loop's id, used both in the assistant message and in
  its ``role: "tool"`` reply, so the pair always matches.
- every call gets exactly one tool message right after its assistant message: results are
  moved up in call order, a call never answered gets a "not executed" result, and a tool
  message answering no call becomes a user note.
- harness notes (``kind`` notice, format_error, wind_down, truncated) are user messages.

``RequestRenderer`` renders a growing history incrementally (an unchanged prefix is reused)
and records each request for the journal without what earlier entries already hold.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import UNANSWERED, Message, ToolSpec
from reactloop.models.openai.reply import REASONING_KEYS, wire_call
from reactloop.models.schemas.dialects import schema_for
from reactloop.support import json_decode

WireMessage = dict[str, Any]

HARNESS_KINDS = frozenset({"notice", "format_error", "wind_down", "truncated"})
NOT_EXECUTED = json.dumps({"ok": False, "error": UNANSWERED})


def safe_arguments(text: str) -> str:
    """``text`` when it is a JSON object, else ``"{}"`` so that no server rejects the echo."""
    try:
        value = json_decode.safe_loads(text)
    except json_decode.JSONRefused:
        return "{}"
    return text if isinstance(value, dict) else "{}"


def render_message(message: Message, *, echo_tool_name: bool = False) -> WireMessage:
    """One neutral message as a wire message (``pair_tool_calls`` sets the tool ids)."""
    if message.kind in HARNESS_KINDS and message.role != "tool":
        return {"role": "user", "content": message.content}
    if message.role == "assistant":
        return render_assistant(message)
    if message.role == "tool":
        wire: WireMessage = {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
        if echo_tool_name and message.name:
            wire["name"] = message.name
        return wire
    return {"role": message.role, "content": message.content}


def render_assistant(message: Message) -> WireMessage:
    raw = message.raw if isinstance(message.raw, Mapping) else {}
    raw_calls = raw.get("tool_calls") or []
    content = message.content
    if isinstance(raw.get("content"), str) and len(raw_calls) == len(message.tool_calls):
        content = raw["content"]
    wire: WireMessage = {"role": "assistant", "content": content}
    if not message.tool_calls:
        return wire
    wire["tool_calls"] = [
        wire_call(call, safe_arguments(call.arguments)) for call in message.tool_calls
    ]
    reasoning = {key: raw[key] for key in REASONING_KEYS if isinstance(raw.get(key), str)}
    if not reasoning and message.reasoning:
        reasoning = {"reasoning_content": message.reasoning}
    wire.update(reasoning)
    return wire


def render_history(
    messages: Sequence[Message], *, echo_tool_name: bool = False
) -> list[WireMessage]:
    """The whole history as wire messages, paired and repaired (see the module docstring)."""
    rendered = [render_message(m, echo_tool_name=echo_tool_name) for m in messages]
    return pair_tool_calls(messages, rendered)


def pair_tool_calls(
    messages: Sequence[Message], rendered: Sequence[WireMessage]
) -> list[WireMessage]:
    """Put exactly one tool reply, with the echoed wire id, after each assistant tool call."""
    output: list[WireMessage] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role != "assistant" or message.kind in HARNESS_KINDS:
            output.append(
                _orphan_note(rendered[index]) if message.role == "tool" else rendered[index]
            )
            index += 1
            continue
        end = index + 1
        while end < len(messages) and messages[end].role != "assistant":
            end += 1
        output.extend(_answered_turn(messages[index:end], rendered[index:end]))
        index = end
    return output


def _answered_turn(
    messages: Sequence[Message], rendered: Sequence[WireMessage]
) -> list[WireMessage]:
    """An assistant message, one reply per call in call order, then the other messages."""
    calls = messages[0].tool_calls
    replies: dict[str, list[WireMessage]] = {}
    others: list[WireMessage] = []
    ids = {call.id for call in calls} | {call.echo_id for call in calls}
    for message, wire in zip(messages[1:], rendered[1:], strict=True):
        if message.role == "tool" and message.tool_call_id in ids:
            replies.setdefault(message.tool_call_id or "", []).append(wire)
        else:
            others.append(_orphan_note(wire) if message.role == "tool" else wire)
    output = [rendered[0]]
    for call in calls:
        answers = replies.get(call.id) or replies.get(call.echo_id) or []
        reply = answers.pop(0) if answers else {"role": "tool", "content": NOT_EXECUTED}
        output.append({**reply, "tool_call_id": call.echo_id})
    for leftover in replies.values():
        others[:0] = [_orphan_note(w) for w in leftover]
    return output + others


def _orphan_note(wire: WireMessage) -> WireMessage:
    if wire.get("role") != "tool":
        return wire
    content = wire.get("content", "")
    return {"role": "user", "content": f"[result of an earlier tool call] {content}"}


def render_tools(tools: Sequence[ToolSpec]) -> list[WireMessage]:
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": schema_for(spec, "openai") or {"type": "object", "properties": {}},
            },
        }
        for spec in tools
    ]


def render_tool_choice(choice: str, tools: Sequence[ToolSpec]) -> str | WireMessage | None:
    """The wire ``tool_choice``; None (no tools) means "leave it out".

    ``auto`` is sent explicitly: llama-cpp-python reads a missing ``tool_choice`` as "do not
    use the tools".
    """
    if not tools:
        return None
    if choice in ("auto", "none", "required"):
        return choice
    if choice not in {spec.name for spec in tools}:
        names = ", ".join(spec.name for spec in tools)
        raise ModelError(f"tool_choice {choice!r} is not one of the tools ({names})")
    return {"type": "function", "function": {"name": choice}}


def answer_format(schema: dict[str, Any]) -> WireMessage:
    """The ``response_format`` that asks for a typed answer's JSON. Not ``strict``: strict mode
    wants every property required and ``additionalProperties: false``, which would change the
    type; the answer is validated by the run either way."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": schema, "strict": False},
    }


class RequestRenderer:
    """Wire messages for one adapter: renders of an unchanged history prefix are reused, and
    journal entries hold only what is new since the previous entry of the same history."""

    def __init__(self, *, echo_tool_name: bool) -> None:
        self.echo_tool_name = echo_tool_name
        self._lock = threading.Lock()
        self._source: list[Message] = []
        self._rendered: list[WireMessage] = []
        self._journaled: list[WireMessage] = []
        self._journaled_tools: Any = None
        self._journaled_history: Sequence[Message] | None = None

    def render(self, messages: Sequence[Message]) -> list[WireMessage]:
        with self._lock:
            same = 0
            limit = min(len(self._source), len(messages))
            while same < limit and self._source[same] is messages[same]:
                same += 1
            del self._source[same:], self._rendered[same:]
            for message in messages[same:]:
                self._source.append(message)
                self._rendered.append(render_message(message, echo_tool_name=self.echo_tool_name))
            rendered = list(self._rendered)
        return pair_tool_calls(messages, rendered)

    def journal_entry(self, body: dict[str, Any], history: Sequence[Message]) -> dict[str, Any]:
        """The request without what this history's earlier entries recorded (linear journals)."""
        messages = body["messages"]
        entry = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        entry["n_messages"] = len(messages)
        with self._lock:
            previous = self._journaled if history is self._journaled_history else None
            if previous and messages[: len(previous)] == previous:
                entry["new_messages"] = messages[len(previous) :]
                if body.get("tools") != self._journaled_tools:
                    entry["tools"] = body.get("tools")
            else:
                entry["messages"] = messages
                entry["tools"] = body.get("tools")
            self._journaled, self._journaled_tools = messages, body.get("tools")
            self._journaled_history = history
        return entry
