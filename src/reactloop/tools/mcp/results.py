"""What an MCP ``CallToolResult`` becomes: the output the model sees, or a ``ToolError``.

Text content reaches the model as text; structured content as JSON, alone when the text is
only the same JSON again (as the spec tells servers to send), else beside the text. When the
structured content says nothing the text does not, the model gets the text once: a one-field
wrapper under a name that says nothing (``{"content": TEXT}`` of
``@modelcontextprotocol/server-filesystem``, ``{"result": x}`` of Python SDK servers) of the
text itself or of its JSON is unwrapped, not sent beside the text again. Images,
audio and resources are described in one line each (kind, MIME type, size, URI), never dropped
silently.
An ``isError`` result becomes an error observation with the server's own words.
"""

from __future__ import annotations

import json
from typing import Any

from reactloop.errors import ToolError

MAX_RESOURCE_TEXT = 4000


def convert_result(result: Any, server: str) -> Any:
    """The tool output for a ``CallToolResult``; raises ToolError when it says ``isError``."""
    parts = [describe_block(block) for block in result.content or ()]
    text = "\n".join(part for part in parts if part)
    structured = result.structured_content
    if result.is_error:
        raise ToolError(text or f"MCP server {server!r} reported an error without a message")
    if structured is None:
        return text
    if not text or _same_json(text, structured):
        return structured
    if isinstance(structured, dict) and len(structured) == 1:
        [(name, value)] = structured.items()
        if name in _WRAPPERS and _same_text(text, value):
            return text  # the text once: the wrapper adds nothing to it
        if name in _WRAPPERS and _same_json(text, value):
            return value
    return {"structured_content": structured, "text": text}


# The names under which servers wrap their whole result in structured content: the name says
# nothing about the value (the Python SDK's ``result`` for a plain return value; the
# filesystem server's ``content`` for the text it also sends).
_WRAPPERS = frozenset({"result", "content", "text", "output"})


def _same_text(text: str, value: Any) -> bool:
    return isinstance(value, str) and (value == text or value.strip() == text.strip())


def describe_block(block: Any) -> str:
    """One content block as text for the model."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        return f"[{kind} content: {block.mime_type}, about {size} bytes, not shown]"
    if kind == "resource":
        return _embedded(block.resource)
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        about = f": {block.description}" if block.description else ""
        return f"[resource link {block.uri} ({block.name}{mime}){about}]"
    return f"[{kind or 'unknown'} content, not shown]"


def _embedded(resource: Any) -> str:
    mime = f", {resource.mime_type}" if getattr(resource, "mime_type", None) else ""
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        shown = text if len(text) <= MAX_RESOURCE_TEXT else text[:MAX_RESOURCE_TEXT] + " [...]"
        return f"[resource {resource.uri}{mime}]\n{shown}"
    blob = getattr(resource, "blob", "") or ""
    return f"[resource {resource.uri}{mime}, about {len(blob) * 3 // 4} bytes of binary, not shown]"


def _same_json(text: str, structured: Any) -> bool:
    try:
        return bool(json.loads(text) == structured)
    except (ValueError, RecursionError):
        return False
