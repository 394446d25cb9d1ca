"""``lookup(key)``: reads a value from the user's notes (a JSON object of key → value)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reactloop.errors import ToolError, UsageError
from reactloop.support.json_decode import read_json_file
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext
from reactloop.tools.plain import plain_tool

MAX_KEYS_SHOWN = 20


def load_notes(path: str | Path) -> dict[str, Any]:
    """Read a notes file; raises UsageError with a one-line reason."""
    data = read_json_file(path, "notes file")
    if not isinstance(data, dict):
        raise UsageError(f"notes file {path} must hold a JSON object of key -> value")
    return data


def lookup_tool(notes: Mapping[str, Any]) -> Tool:
    notes = dict(notes)

    def lookup(key: str) -> Any:
        """Read a value from the user's notes by its key.

        Args:
            key: the name of the note
        """
        wanted = key.strip()
        if wanted in notes:
            return notes[wanted]
        keys = sorted(notes)
        shown = ", ".join(keys[:MAX_KEYS_SHOWN]) + (", …" if len(keys) > MAX_KEYS_SHOWN else "")
        raise ToolError(f"no note with key {wanted!r}; keys: {shown or 'none'}")

    return plain_tool(lookup, read_only=True, bounded=True)


def tools(context: ToolContext) -> list[Tool]:
    if context.notes is None:
        raise UsageError("the lookup tool needs a notes file: --notes FILE.json")
    return [lookup_tool(load_notes(context.notes))]
