"""The ``/v1/messages`` request: neutral messages as Anthropic messages, tools, tool choice.

Rendering follows the Messages API's rules and repairs only what would make it refuse:

- ``system`` messages become the top-level ``system`` (joined by blank lines).
- an assistant message is echoed from the content it came from (``Message.raw``): every block
  unchanged and in its place, ``thinking`` and ``redacted_thinking`` with their signatures, as
  the API requires during tool use; only empty text blocks (which the API refuses) are left
  out, a ``tool_use`` input that is not an object (cut off by ``max_tokens``) becomes ``{}``,
  and an id the server did not send (or sent twice) becomes the loop's id. Without ``raw``
  (another adapter's history) the content is built from the text and the calls.
- the user message after an assistant message starts with one ``tool_result`` block per
  ``tool_use``, in call order, ``is_error: true`` for a failed call; a call never answered
  gets a "not executed" error; the other messages up to the next assistant message (notes,
  a result answering no call) follow as text blocks of that same user message, so
  consecutive results and notes are one user turn.
- deferred tools (``ModelRequest.deferred``) are sent with ``defer_loading: true`` and the
  tool-search tool after them (``SEARCH_TOOLS``: BM25 by default, or regex), never deferred;
  the server's ``server_tool_use`` and ``tool_search_tool_result`` blocks are echoed with the
  rest of the assistant's content, as the API needs them to expand what it loaded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import UNANSWERED, Message, ToolCall, ToolSpec
from reactloop.models.schemas.dialects import schema_for
from reactloop.support import json_decode

Block = dict[str, Any]
WireMessage = dict[str, Any]

NOT_EXECUTED = json.dumps({"ok": False, "error": UNANSWERED})
EMPTY_REPLY = "(empty reply)"  # the API refuses an assistant message without content


def render_system(messages: Sequence[Message]) -> str:
    return "\n\n".join(m.content for m in messages if m.role == "system" and m.content)


def render_messages(messages: Sequence[Message]) -> list[WireMessage]:
    """The history (without ``system``) as alternating user and assistant messages."""
    wire: list[WireMessage] = []
    pending: list[Block] = []  # the user blocks gathered since the last assistant message
    calls: dict[str, tuple[ToolCall, str]] = {}  # loop id -> (call, echoed id)
    results: dict[str, Block] = {}
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "assistant" and not message.kind:
            _close_user_turn(wire, pending, calls, results)
            echo = echo_ids(message.tool_calls)
            calls = {
                call.id: (call, wire_id)
                for call, wire_id in zip(message.tool_calls, echo, strict=True)
            }
            results, pending = {}, []
            wire.append({"role": "assistant", "content": assistant_content(message, echo)})
        elif message.role == "tool" and message.tool_call_id in calls.keys() - results.keys():
            results[message.tool_call_id or ""] = tool_result(message, calls)
        elif message.role == "tool":
            pending.append(_text_block(f"[result of an earlier tool call] {message.content}"))
        elif message.content:
            pending.append(_text_block(message.content))
    _close_user_turn(wire, pending, calls, results)
    return wire


def _close_user_turn(
    wire: list[WireMessage],
    pending: list[Block],
    calls: Mapping[str, tuple[ToolCall, str]],
    results: Mapping[str, Block],
) -> None:
    answers = [results.get(loop_id) or _not_executed(echo) for loop_id, (_, echo) in calls.items()]
    blocks = answers + pending
    if not blocks:
        return
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        wire.append({"role": "user", "content": blocks[0]["text"]})
    else:
        wire.append({"role": "user", "content": blocks})


def echo_ids(calls: Sequence[ToolCall]) -> list[str]:
    """The id to send for each call: its ``echo_id``, else (a repeat, which Anthropic
    refuses) the loop's."""
    seen: set[str] = set()
    ids = []
    for call in calls:
        chosen = call.echo_id if call.echo_id not in seen else call.id
        seen.add(chosen)
        ids.append(chosen)
    return ids


def assistant_content(message: Message, echo: Sequence[str]) -> list[Block]:
    raw = raw_blocks(message)
    if raw is None:
        blocks = [_text_block(message.content)] if message.content else []
        blocks += [_tool_use(call, wire_id, call.arguments) for call, wire_id in zip(
            message.tool_calls, echo, strict=True)]  # fmt: skip
    else:
        uses = iter(zip(message.tool_calls, echo, strict=True))
        blocks = [_echo_block(block, uses) for block in raw if not _empty_text(block)]
    return blocks or [_text_block(EMPTY_REPLY)]


def raw_blocks(message: Message) -> list[Mapping[str, Any]] | None:
    """The content blocks this adapter kept, when they match the message's calls."""
    raw = message.raw
    content = raw.get("content") if isinstance(raw, Mapping) else None
    if not isinstance(content, list) or not all(isinstance(b, Mapping) for b in content):
        return None
    uses = sum(1 for block in content if block.get("type") == "tool_use")
    return content if uses == len(message.tool_calls) else None


def _echo_block(block: Mapping[str, Any], uses: Any) -> Block:
    if block.get("type") != "tool_use":
        return dict(block)  # unchanged: thinking signatures are checked byte for byte
    _, wire_id = next(uses)
    echoed = dict(block)
    echoed["id"] = wire_id
    if not isinstance(block.get("input"), Mapping):
        echoed["input"] = {}
    return echoed


def _tool_use(call: ToolCall, wire_id: str, arguments: str) -> Block:
    try:
        value = json_decode.safe_loads(arguments) if arguments.strip() else {}
    except json_decode.JSONRefused:
        value = {}
    return {
        "type": "tool_use",
        "id": wire_id,
        "name": call.name,
        "input": value if isinstance(value, dict) else {},
    }


def tool_result(message: Message, calls: Mapping[str, tuple[ToolCall, str]]) -> Block:
    _, wire_id = calls[message.tool_call_id or ""]
    block: Block = {"type": "tool_result", "tool_use_id": wire_id, "content": message.content}
    if _failed(message.content):
        block["is_error"] = True
    return block


def _failed(content: str) -> bool:
    """Whether a result's JSON says ``"ok": false`` (results are ``{"ok": …}`` objects)."""
    if '"ok": false' not in content and '"ok":false' not in content:
        return False
    try:
        value = json_decode.safe_loads(content)
    except json_decode.JSONRefused:
        return False
    return isinstance(value, dict) and value.get("ok") is False


def _not_executed(wire_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": wire_id,
        "content": NOT_EXECUTED,
        "is_error": True,
    }


def _text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def _empty_text(block: Mapping[str, Any]) -> bool:
    return block.get("type") == "text" and not block.get("text")


SEARCH_TOOLS: dict[str, Block] = {  # the server-side tool search, by variant
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def render_tools(
    tools: Sequence[ToolSpec], deferred: frozenset[str] = frozenset(), search: str = "bm25"
) -> list[Block]:
    """The ``tools``; those named in ``deferred`` with ``defer_loading``, and then the
    ``search`` variant of the tool-search tool (last: the cache breakpoint goes on it)."""
    rendered: list[Block] = []
    for spec in tools:
        schema = schema_for(spec, "anthropic") or {"type": "object", "properties": {}}
        tool: Block = {"name": spec.name, "description": spec.description, "input_schema": schema}
        if spec.name in deferred:
            tool["defer_loading"] = True
        rendered.append(tool)
    if any(spec.name in deferred for spec in tools):
        rendered.append(dict(SEARCH_TOOLS[search]))
    return rendered


def render_tool_choice(
    choice: str, tools: Sequence[ToolSpec], *, parallel: bool = True, thinking: bool = False
) -> Block | None:
    """The wire ``tool_choice`` (None: no tools, leave it out).

    ``auto`` → ``auto``, ``required`` → ``any``, ``none`` → ``none``, a tool's name → ``tool``;
    ``parallel=False`` adds ``disable_parallel_tool_use``. Extended thinking allows only
    ``auto`` and ``none``: forcing a tool with it is an error, not a silent change.
    """
    if not tools:
        return None
    if choice in ("auto", "none"):
        wire: Block = {"type": choice}
    elif choice == "required":
        wire = {"type": "any"}
    elif choice in {spec.name for spec in tools}:
        wire = {"type": "tool", "name": choice}
    else:
        names = ", ".join(spec.name for spec in tools)
        raise ModelError(f"tool_choice {choice!r} is not one of the tools ({names})")
    if thinking and wire["type"] in ("any", "tool"):
        raise ModelError(
            f"tool_choice {choice!r} forces a tool, which Anthropic refuses with extended "
            "thinking (only auto and none are allowed): drop --thinking or the forced choice"
        )
    if not parallel and wire["type"] != "none":
        wire["disable_parallel_tool_use"] = True
    return wire


class JournalEntries:
    """Journal entries of requests, each without what the previous one of the same history
    already holds (``new_messages`` instead of ``messages``), so that journals stay linear."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one model may serve runs in several threads
        self._messages: list[WireMessage] = []
        self._tools: Any = None
        self._history: Sequence[Message] | None = None

    def entry(self, body: Mapping[str, Any], history: Sequence[Message]) -> dict[str, Any]:
        messages = list(body.get("messages") or [])
        entry = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        entry["n_messages"] = len(messages)
        with self._lock:
            previous = self._messages if history is self._history else []
            if previous and messages[: len(previous)] == previous:
                entry["new_messages"] = messages[len(previous) :]
                if body.get("tools") != self._tools:
                    entry["tools"] = body.get("tools")
            else:
                entry["messages"] = messages
                entry["tools"] = body.get("tools")
            self._messages, self._tools, self._history = messages, body.get("tools"), history
        return entry
