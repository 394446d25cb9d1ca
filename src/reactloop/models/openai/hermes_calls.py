"""The body of one written tool call read into calls, leniently, as the models write them:
JSON or a Python dict literal (``ast.literal_eval``, never ``eval``), a list of calls or
several objects one after another, ``{"type": "function", "function": {…}}``, ``"parameters"``
for ``"arguments"``, arguments double-encoded as a string, and Qwen3-Coder XML
(``<function=name><parameter=p>value</parameter></function>``, or Llama 3's JSON inside it).

``hermes.py`` finds the blocks in a reply's text; a body that is not whole calls gives ``[]``.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from reactloop.support import json_decode

ToolCallText = tuple[str, str]  # (name, arguments as JSON text)

_FUNCTION = re.compile(
    r"<function=([^>\n]+)>(.*?)(?:</function>|(?=<function=)|\Z)", re.DOTALL | re.IGNORECASE
)
_PARAMETER = re.compile(
    r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL | re.IGNORECASE
)
_MAX_LITERAL_CHARS = 100_000  # ast.literal_eval on huge input is slow and may exhaust memory


def calls_in_body(body: str) -> list[ToolCallText]:
    stripped = body.strip()
    if stripped[:10].lower() == "<function=":
        return xml_calls(stripped)
    value = _load_object(stripped)
    if value is None:
        return _json_sequence(stripped)
    return calls_from_value(value)


def _json_sequence(body: str) -> list[ToolCallText]:
    """Several JSON objects one after another in one block (some models do this)."""
    calls: list[ToolCallText] = []
    position = 0
    while position < len(body):
        try:
            value, position = json_decode.raw_decode(body, position)
        except json_decode.JSONRefused:
            return []
        recovered = calls_from_value(value)
        if not recovered:
            return []
        calls.extend(recovered)
        while position < len(body) and body[position] in " \t\r\n,":
            position += 1
    return calls


def calls_from_value(value: Any) -> list[ToolCallText]:
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_object(item) for item in items]
    if not calls or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


def _call_from_object(item: Any) -> ToolCallText | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict) and "name" not in item:
        item = item["function"]  # {"type": "function", "function": {...}}
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    if "description" in item and "arguments" not in item:
        return None  # a tool definition echoed from the prompt, not a call
    arguments = item.get("arguments", item.get("parameters"))
    text = _arguments_text(arguments)
    return None if text is None else (name.strip(), text)


def _arguments_text(arguments: Any) -> str | None:
    """Arguments as the text of a JSON object, or None when they are not an object."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        arguments = _load_object(arguments)  # double-encoded: a string holding the object
    return _dump(arguments) if isinstance(arguments, dict) else None


def xml_calls(text: str) -> list[ToolCallText]:
    calls: list[ToolCallText] = []
    for function in _FUNCTION.finditer(text):
        name, body = function.group(1).strip(), function.group(2)
        if not name:
            return []
        parameters = {
            match.group(1).strip(): _xml_value(match.group(2))
            for match in _PARAMETER.finditer(body)
        }
        if not parameters and body.strip():
            inline = _load_object(body.strip())  # Llama 3 style: <function=name>{...}</function>
            if not isinstance(inline, dict):
                return []
            parameters = inline
        arguments = _dump(parameters)
        if arguments is None:
            return []
        calls.append((name, arguments))
    return calls


def _xml_value(raw: str) -> Any:
    value = raw.removeprefix("\n").removesuffix("\n")
    if value.strip()[:1] in ("{", "["):
        try:
            return json_decode.safe_loads(value)
        except json_decode.JSONRefused:
            return value
    return value


def _load_object(text: str) -> Any:
    """A JSON value, else a Python literal, else None. Never evaluates code."""
    try:
        return json_decode.safe_loads(text)
    except json_decode.JSONRefused:
        pass
    if len(text) > _MAX_LITERAL_CHARS or not text.startswith(("{", "[")):
        return None
    if json_decode.nesting_exceeds(text, json_decode.MAX_DEPTH):  # quoted brackets count: cautious
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _dump(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None  # a literal JSON cannot carry (a set, bytes, a complex number)
