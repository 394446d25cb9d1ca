"""A tool's output as the model sees it: as text (``as_text``), its head and tail within the
observation budget (``cut_head_tail``), saved whole (``spill``); a tool's failure as a message
(``failure_message``). ``Toolbox`` (``toolbox.py``) shapes each result with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reactloop.errors import ToolError, describe_exception
from reactloop.messages import ToolCall
from reactloop.support.json_decode import MAX_DEPTH, nesting_exceeds
from reactloop.support.own_files import create_in_folder
from reactloop.tools.read_output import cut_marker

_STRICT_DUMPS = json.JSONEncoder(ensure_ascii=False).encode


def spill(folder: Path | None, call: ToolCall, text: str) -> str | None:
    """Save a call's whole output in ``folder``; None when there is nowhere to, or saving
    fails (a full disk): the model still gets the head and the tail."""
    if folder is None:
        return None
    safe_id = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in call.id)
    name = f"{safe_id}-{call.name}.txt"
    try:
        with create_in_folder(folder, name) as file:
            file.write(text.encode("utf-8", errors="backslashreplace"))
    except OSError:
        return None
    return str(folder / name)


def failure_message(exc: BaseException) -> str:
    """A ToolError's own message (what the model is meant to see), else ``Type: message``."""
    if isinstance(exc, ToolError):
        try:
            return str(exc)
        except BaseException:  # a hostile __str__: say what it was instead
            pass
    return describe_exception(exc)


def as_text(output: Any) -> tuple[Any, str]:
    """The output as sent (JSON-able, else its ``str``) and its text, to measure its length."""
    if isinstance(output, str):  # a subclass's own methods (``__len__``…) are not called
        text = str.__str__(output)
        return text, text
    if output is None or isinstance(output, bool | int | float):
        return output, str(output)  # short: only its length matters here
    try:
        text = _STRICT_DUMPS(output)
    except (TypeError, ValueError):
        text = str.__str__(str(output))
        return text, text
    if nesting_exceeds(text, MAX_DEPTH):
        raise ValueError(f"it is nested deeper than {MAX_DEPTH} levels")
    return output, text


def cut_head_tail(text: str, limit: int, *, handle: str | None = None) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, marking the cut;
    with ``handle``, the mark says how to read what was cut."""
    if len(text) <= limit:
        return text
    keep = max(limit - len(cut_marker(len(text), handle, len(text))), 0)  # the widest mark
    head = keep // 2
    tail = keep - head
    marker = cut_marker(len(text) - head - tail, handle, head)
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")
