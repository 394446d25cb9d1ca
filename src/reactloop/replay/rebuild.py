"""What a replay rebuilds from a journal's ``run_start``: the tools, the limits, the notes.

Journals come from elsewhere, so every value is checked: anything that would break the loop
halfway is a ``UsageError`` now.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import named_type
from reactloop.journal.schema import RunStartEvent
from reactloop.limits import Limits
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import DEFAULT_FAMILIES, build_tools, parse_families


def run_start_of(events: Sequence[JournalEvent], path: Path) -> RunStartEvent:
    start = next((e for e in events if isinstance(e, RunStartEvent)), None)
    if start is None:
        raise UsageError(f"{path} has no run_start event; it cannot be replayed")
    return start


def first_run(lines: Sequence[Mapping[str, Any]]) -> tuple[Sequence[Mapping[str, Any]], int]:
    """The lines of a journal's first run, and how many runs it holds (a ``reactloop chat``
    session, or ``Conversation(journal=...)``, writes one run per turn to one file)."""
    starts = [i for i, line in enumerate(lines) if named_type(line) is RunStartEvent]
    if len(starts) < 2:
        return lines, len(starts)
    return lines[: starts[1]], len(starts)


def object_or_empty(value: Any, key: str) -> Mapping[str, Any]:
    """``run_start``'s ``key``, its ``value`` (absent: empty); anything but an object is a
    usage error."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"the journal's {key} is not an object: {value!r:.80}")
    return value


def families_of(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The tool families a CLI run used: ``tools`` (a list or ``"a,b"``), else the defaults."""
    families_value = config.get("tools")
    if isinstance(families_value, str):
        return parse_families(families_value)
    if isinstance(families_value, list | tuple):
        return parse_families(",".join(str(name) for name in families_value))
    return DEFAULT_FAMILIES


def recorded_workspace(config: Mapping[str, Any]) -> Path | None:
    return _path_or_none(config.get("workspace"))


def tools_from_config(
    config: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> list[Tool]:
    """The tools a CLI run used, rebuilt from ``run_start``'s config.

    Reads ``tools`` (family names, a list or ``"a,b"``), ``notes``, ``workspace`` (default:
    the current folder, as ``reactloop run`` does) and ``read_only``; never a folder for the
    harness to write in (``reactloop run`` records none: one in a journal was put there).
    Relative paths are taken from the current folder. ``extra`` goes to
    ``ToolContext.extra`` (``sandbox_mode``).
    """
    context = ToolContext(
        notes=_notes_path(config.get("notes")),
        workspace=recorded_workspace(config) or Path.cwd(),
        read_only=bool(config.get("read_only")),
        extra=dict(extra or {}),
    )
    return build_tools(families_of(config), context)


def recorded_mcp(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The MCP servers a CLI run started (``config["mcp"]``: ``stdio`` command lines,
    ``urls``, the ``config`` file), as ``open_mcp_tools`` takes them; None without any."""
    value = config.get("mcp")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise UsageError(f"the journal's mcp is not an object: {value!r:.80}")
    lists = {key: value.get(key) or [] for key in ("stdio", "urls")}
    for key, items in lists.items():
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise UsageError(f"the journal's mcp {key} is not a list of strings: {items!r:.80}")
    path = value.get("config")
    if path is not None and not isinstance(path, str):
        raise UsageError(f"the journal's mcp config is not a path: {path!r:.80}")
    if not (lists["stdio"] or lists["urls"] or path):
        return None
    return {**lists, "config": Path(path) if path else None}


def limits_from(data: Mapping[str, Any]) -> Limits:
    """The recorded run's ``Limits``, without ``max_cost``: a replay has no price to count it.

    A value of the wrong type is a ``UsageError`` (it would break the loop halfway).
    """
    hints = typing.get_type_hints(Limits)
    values = {k: v for k, v in data.items() if k in hints and k != "max_cost"}
    for name, value in values.items():
        if not _fits(value, hints[name]):
            raise UsageError(f"the journal's limits are invalid: {name} = {value!r:.80}")
    try:
        return Limits(**values)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"the journal's limits are invalid: {exc}") from None


def _fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a field typed ``int``, ``bool``, ``float``, ``str`` (or a
    ``Literal`` of strings) or ``X | None``."""
    allowed = typing.get_args(hint) or (hint,)
    if isinstance(value, str):
        return str in allowed or value in _literal_values(allowed)
    if value is None or isinstance(value, bool) or (isinstance(value, int) and int in allowed):
        return type(value) in allowed
    if not isinstance(value, int | float) or float not in allowed:
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond the float range
        return False


def _literal_values(allowed: tuple[Any, ...]) -> set[Any]:
    values: set[Any] = set()
    for option in allowed:
        if typing.get_origin(option) is typing.Literal:
            values.update(typing.get_args(option))
    return values


def limit_notes(data: Mapping[str, Any]) -> list[str]:
    if data.get("max_cost") is None:
        return []
    return [
        f"the recorded run had a cost limit of {data['max_cost']!r} dollars; "
        "the replay has no price table, so it runs without one"
    ]


def _notes_path(value: Any) -> Path | None:
    """The recorded notes file; one that is there but no regular file (a FIFO) is refused."""
    path = _path_or_none(value)
    if path is not None and path.exists() and not path.is_file():
        raise UsageError(f"the journal's notes file {path} is not a regular file")
    return path


def _path_or_none(value: Any) -> Path | None:
    return Path(value) if isinstance(value, str | Path) and str(value) else None
