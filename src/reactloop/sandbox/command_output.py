"""``OutputCapture``: read a command's output with bounded memory.

The head and the tail are kept in memory; once the output outgrows them, everything is
streamed to a file (up to ``max_saved_bytes``), so a flood such as ``yes`` costs disk, not the
harness's memory.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import IO

from reactloop.support.own_files import create_in_folder


class OutputCapture:
    """Collects bytes; ``text()`` gives head + marker + tail, ``path`` the full copy if any."""

    def __init__(
        self,
        *,
        head_bytes: int = 8192,
        tail_bytes: int = 8192,
        spill_path: Path | None = None,
        max_saved_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.spill_path = spill_path
        self.max_saved_bytes = max_saved_bytes
        self.total_bytes = 0
        self.saved_bytes = 0
        self._head = bytearray()
        self._tail = bytearray()
        self._spill: IO[bytes] | None = None
        self._saved_small = False
        self.save_error: str | None = None

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self.head_bytes + self.tail_bytes

    @property
    def path(self) -> Path | None:
        return self.spill_path if self._spill is not None or self._saved_small else None

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        room = self.head_bytes - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        if self.truncated:
            self._save(chunk)
        if len(self._tail) > 2 * self.tail_bytes:
            del self._tail[: len(self._tail) - self.tail_bytes]

    def _save(self, chunk: bytes) -> None:
        if self.spill_path is None:
            return
        try:
            if self._spill is None:
                self._spill = create_in_folder(self.spill_path.parent, self.spill_path.name)
                self._write(bytes(self._head) + bytes(self._tail))
            else:
                self._write(chunk)
        except OSError as exc:  # a full disk must not cost the command's result
            self._give_up_saving(exc)

    def _give_up_saving(self, exc: OSError) -> None:
        self.save_error = f"the full output could not be saved: {exc}"
        if self._spill is not None:
            with contextlib.suppress(OSError):
                self._spill.close()
        self._spill = None
        self._saved_small = False
        self.spill_path = None

    def _write(self, data: bytes) -> None:
        assert self._spill is not None
        room = self.max_saved_bytes - self.saved_bytes
        if room > 0:
            self._spill.write(data[:room])
            self.saved_bytes += min(len(data), room)

    def _save_small(self, whole: str) -> None:
        if self.spill_path is not None and self._spill is None:
            try:
                with create_in_folder(self.spill_path.parent, self.spill_path.name) as file:
                    file.write(whole.encode("utf-8"))
                self._saved_small = True
            except OSError as exc:
                self._give_up_saving(exc)

    def close(self) -> None:
        if self._spill is not None:
            try:
                self._finish_file(self._spill)
            except OSError as exc:
                self._give_up_saving(exc)

    def _finish_file(self, spill: IO[bytes]) -> None:
        if self.saved_bytes < self.total_bytes:
            note = f"\n[reactloop: saved {self.saved_bytes} of {self.total_bytes} bytes]\n"
            spill.write(note.encode())
        spill.close()

    def text(self, max_chars: int) -> tuple[str, bool]:
        """Head and tail as text whose JSON string form fits ``max_chars``; True if cut."""
        if not self.truncated:
            whole = bytes(self._head + self._tail).decode("utf-8", errors="replace")
            fitted = fit_json(whole, "", max_chars, total_bytes=self.total_bytes, cut=False)
            if fitted != whole:  # escaping made it too long: keep the whole text on disk too
                self._save_small(whole)
            return fitted, fitted != whole
        head = bytes(self._head).decode("utf-8", errors="replace")
        tail = bytes(self._tail[-self.tail_bytes :]).decode("utf-8", errors="replace")
        return fit_json(head, tail, max_chars, total_bytes=self.total_bytes, cut=True), True


def fit_json(head: str, tail: str, max_chars: int, *, total_bytes: int, cut: bool) -> str:
    """``head`` + ``tail``, shortened from the middle until its JSON form fits ``max_chars``.

    ``cut`` says that bytes between ``head`` and ``tail`` are already missing; any cut is
    marked in the text.
    """
    whole = head + tail
    if not cut and len(json.dumps(whole, ensure_ascii=False)) <= max_chars:
        return whole
    marker = f"\n[... output cut; {total_bytes} bytes in all ...]\n"
    keep_head, keep_tail = len(head), len(tail)
    while True:
        text = head[:keep_head] + marker + (tail[len(tail) - keep_tail :] if keep_tail else "")
        if len(json.dumps(text, ensure_ascii=False)) <= max_chars or keep_head + keep_tail == 0:
            return text
        keep_head, keep_tail = keep_head * 3 // 4, keep_tail * 3 // 4
