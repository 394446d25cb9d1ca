"""The journal: one JSON object per line, flushed after every event.

The first line names the format and its version. Every later line is an event of the run
(see ``reactloop.journal.events``) with ``type``, ``step`` and ``t`` (seconds since the
journal opened).
A run killed at any moment leaves a journal whose complete lines all parse; ``read_journal``
skips a torn last line. The journal alone is enough to replay a run and to render it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from reactloop.errors import JournalError, UsageError
from reactloop.journal.events import Event
from reactloop.support.json_decode import JSONRefused, loads_units, safe_loads
from reactloop.support.json_encode import JOURNAL_DEPTH, is_plain, json_line
from reactloop.support.own_files import open_own_file

FORMAT = "reactloop-journal"
VERSION = 1
# Header field: each \uD800-\uDFFF escape in a line is one code point, a pair included.
UNITS = {"surrogates": "one code point per escape"}

# For each event the loop emits, whether every float in it is finite, so that orjson writes it
# exactly (``json_line(verify=False)``). Only values the loop did not make itself can hold
# NaN or an infinity: a tool's output and a provider's payload; the rest of these events is
# strings, whole numbers and the loop's own timings. Other event types (``run_start`` with the
# user's settings, ``response``, ``stop``, any added later) are always read back and compared.
_FINITE: dict[str, Callable[[dict[str, Any]], bool]] = {
    "request": lambda data: all(is_plain(m.get("raw")) for m in data["messages_new"]),
    "turn": lambda data: is_plain(data["turn"]["raw_message"]),
    "tool_call": lambda data: True,
    "tool_start": lambda data: True,
    "tool_result": lambda data: is_plain(data["result"]["output"]),
    "warning": lambda data: all(map(is_plain, data.values())),
}


class Journal:
    """Writes events to ``path`` as JSONL. Use as an observer: ``Agent(..., journal=Journal(p))``.

    ``fsync=True`` forces each line to disk (durable across power loss, slower). While it is
    open, the journal holds an exclusive ``flock`` on its file, so that ``reactloop resume``
    can tell a journal still being written from one whose process died. ``append=True``
    continues an existing journal (a resumed run): no header, and ``t`` goes on from
    ``t_offset``; a journal another process holds is then a ``JournalError``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        fsync: bool = False,
        append: bool = False,
        t_offset: float = 0.0,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._started = time.monotonic() - t_offset
        self._file: IO[bytes] | None = open_own_file(self.path, "ab" if append else "wb")
        if not _lock(self._file) and append:
            self.close()
            raise JournalError(f"{self.path} is being written by a live process (it is locked)")
        if append:
            return
        header = {
            "type": "journal",
            "format": FORMAT,
            "version": VERSION,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            **UNITS,
        }
        self._write(json_line(header))

    def __call__(self, event: Event) -> None:
        kind, step, data = event
        t = round((time.monotonic() - self._started) * 1_000_000) / 1_000_000  # micros, inline
        record = {"type": kind, "step": step, "t": t, **data}
        finite = _FINITE.get(kind)  # checked here, not in a function: five lines a step
        try:  # whether a NaN or an infinity may hide in it (orjson would write it as null)
            verify = finite is None or not finite(data)
        except (KeyError, TypeError, AttributeError):  # not the shape the loop emits
            verify = True
        line = json_line(record, verify=verify)
        if self._file is not None:  # the line written at once, as a rule (``_write`` inline)
            written = self._file.write(line) or 0
            if written != len(line) or self.fsync:
                self._write(line, written)

    def _write(self, line: bytes, written: int = 0) -> None:
        """Write ``line`` from its byte ``written`` on (all of it, or the rest of one a raw
        write took only part of: a signal, a disk filling up), then ``fsync`` if asked."""
        if self._file is None:
            return
        while written < len(line):
            more = self._file.write(line[written:]) or 0
            if not more:
                break
            written += more
        if written != len(line):
            raise OSError(f"the journal {self.path} took {written} of {len(line)} bytes")
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


def _lock(file: IO[bytes]) -> bool:
    """Take the journal's exclusive lock; False when another open journal holds it."""
    try:
        import fcntl  # POSIX only: elsewhere a journal is not locked
    except ImportError:
        return True
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def is_locked(path: str | Path) -> bool:
    """Whether an open ``Journal`` (of this process or another) is writing ``path``."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        with Path(path).open("rb") as file:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def open_journal(path: str | Path, *, fsync: bool = False) -> Journal:
    """A new ``Journal`` at ``path``; one that cannot be written is a one-line ``UsageError``."""
    try:
        return Journal(path, fsync=fsync)
    except OSError as exc:
        raise UsageError(f"cannot write journal {path}: {exc.strerror or exc}") from None


def iter_journal(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the events of a journal (without the header line); a torn last line is skipped."""
    for _, event in iter_lines(path):
        yield event


def iter_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``iter_journal``'s events with the number of the line each came from."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc.strerror}") from None
    complete = data.split(b"\n")[:-1]  # the last piece is empty or a torn line
    if not complete:
        raise JournalError(f"{path} is not a reactloop journal (no complete line)")
    header = _parse_line(path, 1, complete[0], units=False)
    if header.get("format") != FORMAT:
        raise JournalError(f"{path} is not a reactloop journal (first line has no format)")
    version = header.get("version")
    if type(version) is not int or not 1 <= version <= VERSION:
        raise JournalError(f"{path} has journal version {version!r}; this reads {VERSION}")
    units = all(header.get(key) == value for key, value in UNITS.items())
    for number, line in enumerate(complete[1:], start=2):
        if line.strip():
            yield number, _parse_line(path, number, line, units=units)


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    return list(iter_journal(path))


def _decode(text: str, units: bool) -> Any:
    if units:
        return loads_units(text, max_depth=JOURNAL_DEPTH)
    return safe_loads(text, max_depth=JOURNAL_DEPTH)


def _parse_line(path: Path, number: int, line: bytes, *, units: bool) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise JournalError(f"{path}:{number}: not UTF-8 text") from None
    try:
        value = _decode(text, units)
    except JSONRefused as exc:  # not JSON, a number too long, nesting too deep
        raise JournalError(f"{path}:{number}: not JSON ({exc})") from None
    if not isinstance(value, dict) or "type" not in value:
        raise JournalError(f"{path}:{number}: not a journal event")
    return value
