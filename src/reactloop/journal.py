"""The journal: one JSON object per line, written out before the run does anything that waits.

The first line names the format and its version. Every later line is an event of the run
(see ``reactloop.events``) with ``type``, ``step`` and ``t`` (seconds since the journal opened).
Lines reach the file (one ``write`` for several) before every model call, tool run, approval
question, warning and the end of the run, so a killed run loses nothing it had done. A run
killed at any moment leaves a journal whose complete lines all parse; ``read_journal`` skips a
torn last line. The journal alone is enough to replay a run and to render it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from reactloop.errors import JournalError
from reactloop.events import Event, micros
from reactloop.jsonfast import is_plain, json_line

FORMAT = "reactloop-journal"
# Events after which the loop only computes until the next event (a tool call, a request, a
# warning or the stop), so their lines may wait for it and share its write.
_HELD = frozenset({"response", "turn", "tool_result"})
VERSION = 1

# Containers the loop builds itself, by (event type, key), and where inside them sit the values
# it did not make (tool outputs, provider payloads). The rest of such a container is strings,
# whole numbers and the loop's own timings. See ``_needs_check``.
_INSIDE: dict[tuple[str, str], Callable[[Any], Iterable[Any]]] = {
    ("request", "messages_new"): lambda messages: [message.get("raw") for message in messages],
    ("turn", "turn"): lambda turn: [turn["raw_message"]],
    ("tool_call", "call"): lambda call: (),
    ("tool_result", "result"): lambda result: [result["output"]],
}


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
        self._pending: list[bytes] = []
        self._write_line(
            {
                "type": "journal",
                "format": FORMAT,
                "version": VERSION,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )

    def __call__(self, event: Event) -> None:
        kind, step, data = event
        record = {"type": kind, "step": step, "t": micros(time.monotonic() - self._started)}
        record.update(data)
        self._pending.append(json_line(record, verify=_needs_check(event)))
        if kind not in _HELD:
            self.flush()

    def _write_line(self, record: dict[str, Any]) -> None:
        self._pending.append(json_line(record))
        self.flush()

    def flush(self) -> None:
        """Write the lines held so far, in one call."""
        if self._file is None or not self._pending:
            return
        self._file.write(b"".join(self._pending))
        self._pending.clear()
        if self.fsync:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _needs_check(event: Event) -> bool:
    """Whether a NaN or an infinity may hide in the event (orjson would write it as null)."""
    try:
        for key, value in event.data.items():
            if type(value) in _SIMPLE or is_plain(value):
                continue
            inside = _INSIDE.get((event.type, key))
            if inside is None or not all(map(is_plain, inside(value))):
                return True
    except (KeyError, TypeError, AttributeError):  # not the shape the loop emits
        return True
    return False


_SIMPLE = frozenset({str, int, bool, type(None)})


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
