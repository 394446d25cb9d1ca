"""Recover tool calls that a server left in ``content`` because its tool parser failed.

Open-weight models served over OpenAI-compatible APIs write calls as text that the server is
meant to parse; when it does not (no ``--tool-call-parser``, a template mismatch, a slightly
wrong tag) the reply arrives with ``finish_reason: "stop"`` and the call in ``content``::

    text, calls = extract_tool_calls(turn_text)
    # calls == [("get_weather", '{"location": "Paris, France"}')]

Recognised, anywhere outside ``<think>…</think>``:

* Hermes / Qwen 2.5 / Qwen 3: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``, one or
  several, also with ``"parameters"`` for ``"arguments"``, a list of calls in one block, and
  the tag variants ``<tools>``, ``<tool_calls>``, ``<function_call>``;
* arguments as a JSON object, as a JSON string holding an object, or a Python dict literal
  (read with ``ast.literal_eval``, never ``eval``);
* a block whose closing tag is missing but whose JSON is complete (the stop sequence ate it);
* Qwen3-Coder XML: ``<function=name><parameter=p>value</parameter></function>``, wrapped in
  ``<tool_call>`` or not; values that hold a JSON object or list become that object or list,
  other values stay strings, and the tool's check reads them as its schema's types (``"3"``
  for an integer parameter: pydantic for an ``@tool`` function, ``tools.schema_coerce`` for a
  tool with a JSON Schema, such as an MCP tool).

Every recovered call has a non-empty name and arguments that are the text of a JSON object.
Anything else (truncated JSON, a block without a name, arguments that are not an object)
stays in the returned text exactly as written; this function never raises. Here the blocks
are found in the text; ``hermes_calls.py`` reads a block's body into calls, with its repairs.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from reactloop.models.openai.hermes_calls import (
    ToolCallText,
    calls_from_value,
    calls_in_body,
    xml_calls,
)
from reactloop.support import json_decode

_WRAPPER_TAGS = "tool_call|tool_calls|tools|function_call"
_OPEN = re.compile(rf"<(?:{_WRAPPER_TAGS})>|<function=", re.IGNORECASE)
_WRAPPER_OPEN = re.compile(rf"<(?:{_WRAPPER_TAGS})>", re.IGNORECASE)
_CLOSE = re.compile(rf"</(?:{_WRAPPER_TAGS})>", re.IGNORECASE)
_FUNCTION_OPEN = re.compile(r"<function=", re.IGNORECASE)
_FUNCTION_CLOSE = re.compile(r"</function>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_SPACE = re.compile(r"\s*")


class _Tags:
    """Where each kind of tag sits in the text, found once, so a scan stays linear in length."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.wrapper_opens = [m.start() for m in _WRAPPER_OPEN.finditer(content)]
        self.wrapper_closes = [(m.start(), m.end()) for m in _CLOSE.finditer(content)]
        self.function_opens = [m.start() for m in _FUNCTION_OPEN.finditer(content)]
        self.function_closes = [m.end() for m in _FUNCTION_CLOSE.finditer(content)]
        self.thinking = _thinking_spans(content)
        self.thinking_starts = [span[0] for span in self.thinking]

    def thinking_end(self, index: int) -> int | None:
        """The end of the reasoning span that holds ``index``, if one does."""
        position = bisect.bisect_right(self.thinking_starts, index) - 1
        if position >= 0 and index < self.thinking[position][1]:
            return self.thinking[position][1]
        return None

    def wrapper_body_end(self, start: int) -> tuple[int, int] | None:
        """Body end and block end of a wrapper whose body starts at ``start``; None if unclosed.

        A block is unclosed when another wrapper opens before the next closing tag.
        """
        closing = _first_at_or_after(self.wrapper_closes, (start, start))
        if closing is None:
            return None
        reopening = _first_at_or_after(self.wrapper_opens, start)
        return None if reopening is not None and reopening < closing[0] else closing

    def segment_end(self, start: int) -> int:
        """Where the next wrapper opens after ``start`` (a call cannot run past it), or the end."""
        following = _first_at_or_after(self.wrapper_opens, start)
        return len(self.content) if following is None else int(following)

    def function_end(self, start: int) -> int | None:
        """The end of ``</function>`` for a function opened at ``start``; None if cut off."""
        end = _first_at_or_after(self.function_closes, start)
        following = _first_at_or_after(self.function_opens, start + 1)
        if end is None or (following is not None and following < end):
            return None
        return int(end)


def _first_at_or_after(items: list[Any], key: Any) -> Any:
    position = bisect.bisect_left(items, key)
    return items[position] if position < len(items) else None


def extract_tool_calls(content: str) -> tuple[str, list[ToolCallText]]:
    """Split ``content`` into the text that remains and the tool calls written in it.

    Returns ``(content, [])`` unchanged when nothing is recovered; otherwise the text without
    the recovered blocks, stripped of surrounding whitespace.
    """
    if not isinstance(content, str) or "<" not in content:
        return content, []
    tags = _Tags(content)
    kept: list[str] = []
    calls: list[ToolCallText] = []
    position = search_from = 0
    while (match := _OPEN.search(content, search_from)) is not None:
        thinking_end = tags.thinking_end(match.start())
        if thinking_end is not None:
            search_from = thinking_end
            continue
        recovered, end = _read_block(tags, match)
        if not recovered:
            search_from = match.end()
            continue
        kept.append(content[position : match.start()])
        calls.extend(recovered)
        position = search_from = end
    if not calls:
        return content, []
    kept.append(content[position:])
    return "".join(kept).strip(), calls


def has_tool_call_markup(content: str) -> bool:
    """Whether ``content`` has an opening tag of a written tool call (a cheap check)."""
    return isinstance(content, str) and _OPEN.search(content) is not None


def _read_block(tags: _Tags, match: re.Match[str]) -> tuple[list[ToolCallText], int]:
    """The calls of the block opened at ``match`` and where the block ends; ``[]`` if none."""
    if match.group(0).lower() == "<function=":
        return _leading_call(tags, match.start())
    closing = tags.wrapper_body_end(match.end())
    if closing is not None:
        calls = calls_in_body(tags.content[match.end() : closing[0]])
        if calls:
            return calls, closing[1]
    # No closing tag (a stop sequence ate it), or the body is not one whole call.
    return _leading_call(tags, match.end())


def _leading_call(tags: _Tags, start: int) -> tuple[list[ToolCallText], int]:
    """A complete call right at ``start`` (JSON, or XML up to ``</function>``), if any."""
    content = tags.content
    space = _SPACE.match(content, start)
    offset = space.end() if space else start
    if content[offset : offset + 10].lower() == "<function=":
        end = tags.function_end(offset)
        if end is None:
            return [], start  # cut off mid-call: keep as text
        return xml_calls(content[offset:end]), end
    segment = content[offset : tags.segment_end(offset)]
    if not segment.startswith(("{", "[")):
        return [], start
    try:
        value, end = json_decode.raw_decode(segment)
    except json_decode.JSONRefused:
        return [], start
    return calls_from_value(value), offset + end


def _thinking_spans(content: str) -> list[tuple[int, int]]:
    """Where reasoning is, in order: ``<think>…</think>``, an unclosed ``<think>`` to the end,
    and the text before a ``</think>`` whose opening tag was in the prompt (Qwen3 templates).
    Read in one pass, so a call mentioned in reasoning is reasoning, and a think tag inside a
    call's block (an argument may hold one) is part of the call."""
    tags = sorted(
        (match.start(), match.end(), kind)
        for kind, pattern in _SCAN_TAGS
        for match in pattern.finditer(content)
    )
    spans: list[tuple[int, int]] = []
    state, opened, seen_open = "text", 0, False
    for start, end, kind in tags:
        if state == "think" and kind == "think_close":
            spans.append((opened, end))
            state = "text"
        elif state == "block" and kind == "block_close":
            state = "text"
        elif state == "text" and kind == "think_open":
            state, opened, seen_open = "think", start, True
        elif state == "text" and kind == "block_open":
            state = "block"
        elif state == "text" and kind == "think_close" and not spans and not seen_open:
            spans.append((0, end))
    if state == "think":
        spans.append((opened, len(content)))
    return spans


_SCAN_TAGS = (
    ("think_open", _THINK_OPEN),
    ("think_close", _THINK_CLOSE),
    ("block_open", _WRAPPER_OPEN),
    ("block_close", _CLOSE),
)


__all__ = ["ToolCallText", "extract_tool_calls", "has_tool_call_markup"]
