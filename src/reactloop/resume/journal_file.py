"""The journal a resume continues, read without changing it; then, once the resume goes
ahead, its torn last line set aside.

Every refusal comes before anything is written: a journal still held by a live process (the
``flock`` an open ``Journal`` holds), one damaged before its last line, of another format
version, or without a run is a ``UsageError`` in one line, and the file is as it was.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reactloop.errors import JournalError, UsageError
from reactloop.journal.writer import is_locked, read_journal
from reactloop.support.own_files import open_own_file


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """A journal as found: its events (without the header), the bytes of a torn last line
    (empty when the file ends with a whole line), and when it was created."""

    path: Path
    events: list[dict[str, Any]]
    torn: bytes
    created: datetime | None


def read_recorded(path: str | Path) -> Recorded:
    """The journal at ``path``, checked; a ``UsageError`` says why it cannot be resumed."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"cannot resume {path}: no such journal file")
    if is_locked(path):
        raise UsageError(f"cannot resume {path}: a live process is still writing it")
    try:
        data = path.read_bytes()
        events = read_journal(path)
    except (OSError, JournalError) as exc:
        raise UsageError(f"cannot resume {path}: {exc}") from None
    torn = data[data.rfind(b"\n") + 1 :]
    return Recorded(path=path, events=events, torn=torn, created=_created(data))


def _created(data: bytes) -> datetime | None:
    try:
        header = json.loads(data[: data.index(b"\n")])
        return datetime.fromisoformat(header["created"])
    except (ValueError, KeyError, TypeError):
        return None


def set_aside_torn(recorded: Recorded) -> Path | None:
    """Move a torn last line to ``TRACE.torn`` (appended, never lost) and cut it from the
    journal, so that the resumed run's events start on a line of their own."""
    if not recorded.torn:
        return None
    side = recorded.path.with_name(recorded.path.name + ".torn")
    with open_own_file(side, "ab") as kept:
        kept.write(recorded.torn + b"\n")
        os.fsync(kept.fileno())
    with open_own_file(recorded.path, "ab") as journal:
        os.ftruncate(journal.fileno(), os.fstat(journal.fileno()).st_size - len(recorded.torn))
    return side
