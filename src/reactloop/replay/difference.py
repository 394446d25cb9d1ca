"""The first difference between what a tool returned then and now, with lines around it.

A value is shown as lines (``lines_of``: one line per field, a text of several lines as its
lines), and ``first_difference`` gives the first place they differ as a diff does: the
recorded lines (``-``), the replayed ones (``+``), and up to ``context`` lines both hold
before and after them. A line too long to show whole is cut around the column where it first
differs, never before it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

CONTEXT = 3
WIDTH = 160
_CUT = "…"


def lines_of(value: Any, indent: str = "") -> list[str]:
    """``value`` as lines: ``key: value`` for each field, a list's items as ``- item``."""
    if isinstance(value, Mapping):
        lines = []
        for key, item in value.items():
            lines.extend(_field(f"{indent}{key}:", item, indent))
        return lines
    if isinstance(value, list | tuple):
        lines = []
        for item in value:
            lines.extend(_field(f"{indent}-", item, indent))
        return lines
    if isinstance(value, str) and "\n" in value:
        return [f"{indent}{line}" for line in value.split("\n")]
    return [f"{indent}{_scalar(value)}"]


def _field(label: str, item: Any, indent: str) -> list[str]:
    inner = indent + "  "
    if isinstance(item, Mapping | list | tuple) and item:
        return [label, *lines_of(item, inner)]
    if isinstance(item, str) and "\n" in item:
        return [f"{label} |", *lines_of(item, inner)]
    return [f"{label} {_scalar(item)}"]


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def first_difference(
    expected: Sequence[str], actual: Sequence[str], *, context: int = CONTEXT, width: int = WIDTH
) -> list[str]:
    """The first differing lines with ``context`` lines on each side; [] when none differ."""
    matcher = difflib.SequenceMatcher(a=expected, b=actual, autojunk=False)
    opcodes = matcher.get_opcodes()
    index = next((i for i, op in enumerate(opcodes) if op[0] != "equal"), None)
    if index is None:
        return []
    _, i1, i2, j1, j2 = opcodes[index]
    removed, added = list(expected[i1:i2]), list(actual[j1:j2])
    column = _first_column(removed[0], added[0]) if removed and added else 0
    before = expected[max(0, i1 - context) : i1]  # the block before a change is an equal one
    following = opcodes[index + 1] if index + 1 < len(opcodes) else None
    equal_after = following is not None and following[0] == "equal"
    after = expected[i2 : following[2]][:context] if following and equal_after else []
    shown = [f" {_cut(line, 0, width)}" for line in before]
    shown += [f"-{_cut(line, column, width)}" for line in removed]
    shown += [f"+{_cut(line, column, width)}" for line in added]
    shown += [f" {_cut(line, 0, width)}" for line in after]
    return shown


def _first_column(old: str, new: str) -> int:
    for column, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return column
    return min(len(old), len(new))


def cut_window(line: str, column: int, width: int) -> tuple[int, int]:
    """The slice of ``line`` shown: at most ``width`` characters, ``column`` among them."""
    if len(line) <= width:
        return 0, len(line)
    start = max(0, min(column - width // 2, len(line) - width))
    return start, start + width


def _cut(line: str, column: int, width: int) -> str:
    start, end = cut_window(line, column, width)
    return (_CUT if start > 0 else "") + line[start:end] + (_CUT if end < len(line) else "")
