"""``OutputStore`` and the built-in ``read_output`` tool: nothing cut is out of the model's reach.

When an observation is longer than the run's observation budget, the model gets its head and
tail and a handle (``Toolbox`` makes the cut); the whole text stays here, or in its file beside
the journal when one was saved, and ``read_output(handle, start, length)`` returns any part of
it, never more than the budget at once. The tool is offered from the first cut on.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from reactloop.errors import ToolError
from reactloop.tools.base import Tool, make_tool

READ_OUTPUT = "read_output"
MEMORY_CAP = 64 * 1024 * 1024  # characters of cut output held in memory (the oldest go first)
_HEADER_ROOM = 120  # the header line of a read, and the JSON envelope, within the budget


@dataclass(frozen=True, slots=True)
class _Kept:
    name: str
    total: int
    text: str | None  # None when the text is only in its file
    path: str | None


class OutputStore:
    """The whole text of every cut observation of one run, by handle (thread-safe: the
    results of a concurrent batch are cut on worker threads)."""

    def __init__(self, memory_cap: int = MEMORY_CAP) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        self._memory = 0
        self._memory_cap = memory_cap

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, call_id: str, name: str, text: str, path: str | None) -> str:
        """Hold ``text`` (in memory unless it was saved at ``path``); returns its handle."""
        with self._lock:
            handle = _fresh_handle(call_id, self._kept)
            held = text if path is None else None
            self._kept[handle] = _Kept(name, len(text), held, path)
            if held is not None:
                self._memory += len(held)
                self._evict()
        return handle

    def total(self, handle: str) -> int | None:
        kept = self._kept.get(handle)
        return None if kept is None else kept.total

    def read(self, handle: str, start: int, length: int) -> str:
        """``length`` characters from ``start``; ``ToolError`` (for the model) when it cannot."""
        kept = self._kept.get(handle)
        if kept is None:
            known = ", ".join(list(self._kept)[-5:]) or "none"
            raise ToolError(f"no output has the handle {handle!r} (recent handles: {known})")
        text = kept.text if kept.text is not None else _read_file(kept.path, handle)
        return text[start : start + length]

    def _evict(self) -> None:
        for handle, kept in list(self._kept.items()):
            if self._memory <= self._memory_cap:
                return
            if kept.text is not None:
                self._memory -= len(kept.text)
                self._kept[handle] = _Kept(kept.name, kept.total, None, None)


def _read_file(path: str | None, handle: str) -> str:
    if path is None:
        raise ToolError(f"the output {handle!r} is no longer held (too much output was cut)")
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"the saved output {handle!r} cannot be read ({exc.strerror})") from None


def _fresh_handle(call_id: str, taken: dict[str, _Kept]) -> str:
    base = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in call_id)[:64] or "out"
    handle, suffix = base, 1
    while handle in taken:
        suffix += 1
        handle = f"{base}_{suffix}"
    return handle


def read_output_tool(store: OutputStore, budget: int) -> Tool:
    """The ``read_output`` tool over ``store``; one read never exceeds ``budget`` characters."""
    most = max(budget - _HEADER_ROOM, 1)

    def read_output(handle: str, start: int = 0, length: int = most) -> str:
        """Read part of an output that was cut: the characters from start, at most length.

        :param handle: the handle given where the output was cut
        :param start: the first character to read (0 is the beginning)
        :param length: how many characters to read
        """
        total = store.total(handle)
        start = max(start, 0)
        length = min(max(length, 1), most)
        part = store.read(handle, start, length)
        if total is None:  # evicted between the two looks
            total = len(part)
        end = start + len(part)
        more = f"; next: start={end}" if end < total else "; this is the end"
        return f"[characters {start}-{end} of {total}{more}]\n{part}"

    return make_tool(read_output, name=READ_OUTPUT, read_only=True, bounded=True)


def cut_marker(cut: int, handle: str | None, start: int) -> str:
    if handle is None:
        return f"\n[... {cut} characters cut ...]\n"
    return f'\n[{cut} characters cut; read_output handle="{handle}" start={start}]\n'
