"""One line's worth of a journal, for ``reactloop logs``: read through ``reactloop.journal``'s
reader, whatever run wrote it (one run, a resumed one, a chat of many turns, an eval episode).

A run is a ``run_start`` and what follows it; a resumed run stops more than once, and its last
``stop`` holds the totals. A chat's turns are runs, so its totals are their sum. A journal that
cannot be read (damaged, or not a journal) is a ``Unreadable`` with the reader's reason.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reactloop.errors import JournalError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import iter_events
from reactloop.journal.schema import RunStartEvent, StopEvent
from reactloop.journal.writer import is_locked

JOURNAL_SUFFIX = ".jsonl"


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    path: Path
    modified: float  # when the journal was last written (seconds since the epoch)
    task: str = ""
    model: str = ""
    stop: str = ""  # the last stop reason; "running" or "no stop" without one
    turns: int = 0  # runs in the journal: a chat's turns
    model_calls: int = 0
    tool_calls: int = 0
    tokens: int | None = None  # input + output; None when no model reported any
    cost: float | None = None
    seconds: float = 0.0
    answers: tuple[str, ...] = field(default=())
    forced: bool = False

    def matches(self, text: str) -> bool:
        """``text`` in the task or an answer, case-folded."""
        wanted = text.casefold()
        return any(wanted in part.casefold() for part in (self.task, *self.answers))

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": str(self.path),
            "modified": local_time(self.modified),
            "task": self.task,
            "model": self.model,
            "stop_reason": self.stop,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "cost": self.cost,
            "seconds": self.seconds,
            "answer": self.answers[-1] if self.answers else None,
            "forced": self.forced,
        }


@dataclass(frozen=True, kw_only=True)
class Unreadable:
    path: Path
    modified: float
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": str(self.path),
            "modified": local_time(self.modified),
            "error": self.reason,
        }


Entry = RunSummary | Unreadable


def local_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")


def journals(places: Iterable[Path]) -> Iterator[Path]:
    """The journals in ``places``: a file as it is, a folder's ``*.jsonl`` at any depth."""
    for place in places:
        if place.is_dir():
            yield from (p for p in place.rglob(f"*{JOURNAL_SUFFIX}") if p.is_file())
        else:
            yield place


def modified(path: Path) -> float:
    """When ``path`` was last written; 0 for one that cannot be read (it then says why)."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def read_entry(path: Path) -> Entry:
    try:
        status = path.stat()
    except OSError as exc:
        return Unreadable(path=path, modified=0.0, reason=f"cannot read: {exc.strerror}")
    written = status.st_mtime
    if not stat.S_ISREG(status.st_mode):  # a FIFO would block the reader
        return Unreadable(path=path, modified=written, reason="not a regular file")
    try:
        events = list(iter_events(path))
    except JournalError as exc:
        return Unreadable(path=path, modified=written, reason=_reason(path, exc))
    return _summary(path, written, events)


def _reason(path: Path, exc: JournalError) -> str:
    """The reader's reason without the path the line already shows (``line N: …``)."""
    text = str(exc)
    if text.startswith(f"{path}:"):
        return "line " + text.removeprefix(f"{path}:")
    return text.removeprefix(f"{path} ") or text


def _summary(path: Path, written: float, events: list[JournalEvent]) -> Entry:
    runs = _runs(events)
    if not runs:
        return Unreadable(path=path, modified=written, reason="a journal without a run in it")
    start = runs[0][0]
    stops = [stop for _, stop in runs if stop is not None]
    tokens = [_tokens(stop.usage) for stop in stops]
    costs = [stop.cost for stop in stops if stop.cost is not None]
    answers = [stop.answer for stop in stops if stop.answer is not None]
    last_stop = runs[-1][1]
    return RunSummary(
        path=path,
        modified=written,
        task=_text(start.task),
        model=_text(start.model),
        stop=last_stop.stop_reason if last_stop else _unfinished(path),
        turns=len(runs),
        model_calls=sum(stop.model_calls for stop in stops),
        tool_calls=sum(stop.tool_calls for stop in stops),
        tokens=sum(t for t in tokens if t is not None) if any(tokens) else None,
        cost=sum(costs) if costs else None,
        seconds=sum(stop.seconds for stop in stops if stop.seconds is not None),
        answers=tuple(answers),
        forced=bool(last_stop and last_stop.forced),
    )


def _runs(events: list[JournalEvent]) -> list[tuple[RunStartEvent, StopEvent | None]]:
    """Each run's ``run_start`` and its last ``stop`` (a resumed run's totals), in order."""
    runs: list[tuple[RunStartEvent, StopEvent | None]] = []
    for event in events:
        if isinstance(event, RunStartEvent):
            runs.append((event, None))
        elif isinstance(event, StopEvent) and runs:
            runs[-1] = (runs[-1][0], event)
    return runs


def _unfinished(path: Path) -> str:
    """A journal without a stop: a run still writing it holds its lock; else it was killed."""
    return "running" if is_locked(path) else "no stop (killed?)"


def _tokens(usage: Any) -> int | None:
    if not isinstance(usage, dict):
        return None
    total = _int(usage.get("input_tokens")) + _int(usage.get("output_tokens"))
    return total or None


def _int(value: Any) -> int:
    return value if type(value) is int else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
