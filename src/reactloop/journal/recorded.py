"""A journal as found on disk, read without changing it (``read_recorded``): its events, the
bytes of a torn last line, when it was created; and, once a resume or an approval goes on
with it, that torn line set aside (``set_aside_torn``). What may stop a resume here (no such
file, a live writer, damage) is resume's to say (``resume/checks.py``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reactloop.journal.writer import read_journal
from reactloop.support.own_files import open_own_file


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """A journal as found: its events (without the header), the bytes of a torn last line
    (empty when the file ends with a whole line), and when it was created."""

    path: Path
    events: list[dict[str, Any]]
    torn: bytes
    created: datetime | None


def read_recorded(path: Path) -> Recorded:
    """The journal at ``path``; an ``OSError`` or a ``JournalError`` (a line damaged before
    its last one) when it cannot be read."""
    data = path.read_bytes()
    events = read_journal(path)
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
