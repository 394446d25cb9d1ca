"""The journal: one JSON object per line, flushed after every event.

The first line names the format and its version. Every later line is an event of the run
(see ``reactloop.events``) with ``type``, ``step`` and ``t`` (seconds since the journal opened).
A run killed at any moment leaves a journal whose complete lines all parse; ``read_journal``
skips a torn last line. The journal alone is enough to replay a run and to render it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from reactloop.errors import JournalError
from reactloop.events import Event
from reactloop.jsonfast import dumps

FORMAT = "reactloop-journal"
VERSION = 1


class Journal:
    """Writes events to ``path`` as JSONL. Use as an observer: ``Agent(..., journal=Journal(p))``.

    ``fsync=True`` forces each line to disk (durable across power loss, slower).
    """

    def __init__(self, path: str | Path, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._started = time.monotonic()
        self._file: IO[bytes] | None = self.path.open("wb", buffering=0)
        self._write_line(
            {
                "type": "journal",
                "format": FORMAT,
                "version": VERSION,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )

    def __call__(self, event: Event) -> None:
        record = {"type": event.type, "step": event.step, "t": self._elapsed()}
        record.update(event.data)
        self._write_line(record)

    def _elapsed(self) -> float:
        return round(time.monotonic() - self._started, 6)

    def _write_line(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write((dumps(record) + "\n").encode("utf-8"))
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_journal(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the events of a journal (without the header line); a torn last line is skipped."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc.strerror}") from None
    complete = data.split(b"\n")[:-1]  # the last piece is empty or a torn line
    if not complete:
        raise JournalError(f"{path} is not a reactloop journal (no complete line)")
    header = _parse_line(path, 1, complete[0])
    if header.get("format") != FORMAT:
        raise JournalError(f"{path} is not a reactloop journal (first line has no format)")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise JournalError(f"{path} has journal version {version!r}; this reads {VERSION}")
    for number, line in enumerate(complete[1:], start=2):
        if line.strip():
            yield _parse_line(path, number, line)


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    return list(iter_journal(path))


def _parse_line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise JournalError(f"{path}:{number}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise JournalError(f"{path}:{number}: not JSON ({exc.msg})") from None
    if not isinstance(value, dict) or "type" not in value:
        raise JournalError(f"{path}:{number}: not a journal event")
    return value
