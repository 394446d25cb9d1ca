"""Episode journals between the Ray driver's ``DIR/traces`` and the actors' temporary folders.

An actor never sees DIR. With ``--resume``, the driver sends the journal DIR holds for an
episode (its bytes, with the episode's arguments); the actor writes it into its own folder,
where ``run_episode`` decides, as on the local backend (``continued.py``: on the node that
will do the work, where a recorded workspace is or is not), whether it goes on or starts
again. While episodes run, the driver fetches each one's journal as it grows (its whole
lines, about every ``STREAM_SECONDS``) into DIR, so that an eval killed with episodes in
flight leaves their journals for ``--resume``: an attempt's first lines are written whole (a
temporary file renamed over DIR's journal), the next ones appended (a kill may tear the last
line, which resume sets aside). A journal started again on the actor (a new file there)
first moves DIR's earlier one aside (``NAME.jsonl.restarted-N``). So a kill, of the driver or
of an actor, never costs the journal DIR had.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.continued import ASIDE, set_aside

STREAM_SECONDS = 1.0
Wanted = tuple[str, bool, int]  # what the driver has: the run's token, restarted, its length
Piece = tuple[str, bool, int, bytes]  # the run's token, restarted, from where, the lines


@dataclass(frozen=True)
class Ended:
    """An episode's journal as its actor leaves it: the whole file, a torn line resume set
    aside (``NAME.jsonl.torn``), and whether it started again (not the sent journal)."""

    journal: bytes | None
    torn: bytes | None
    restarted: bool


class ActorJournals:
    """An actor's side: the journals of the episodes it runs, in ``folder``. Each run has a
    token of its own (Ray runs an episode again on a restarted actor) and remembers the file
    it was sent: a different file there means the episode started again."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._runs: dict[str, tuple[str, int | None]] = {}  # stem: token, the sent file's inode
        self._lock = threading.Lock()  # the actor's threads share it

    def begin(self, stem: str, journal: bytes | None) -> Path:
        """The episode's journal path, holding ``journal`` when one was sent."""
        trace = self.folder / f"{stem}.jsonl"
        inode = None
        if journal is not None:
            trace.write_bytes(journal)
            inode = trace.stat().st_ino
        with self._lock:
            self._runs[stem] = (uuid.uuid4().hex, inode)
        return trace

    def end(self, stem: str) -> Ended:
        """The episode's journal, its files removed from the folder."""
        trace = self.folder / f"{stem}.jsonl"
        with self._lock:
            _, sent = self._runs.pop(stem, ("", None))
        read = _whole(trace)
        torn = trace.with_name(f"{trace.name}.torn")
        ended = Ended(
            journal=None if read is None else read[1],
            torn=torn.read_bytes() if torn.exists() else None,
            restarted=sent is not None and (read is None or read[0] != sent),
        )
        for path in [trace, torn, *self.folder.glob(f"{trace.name}{ASIDE}*")]:
            path.unlink(missing_ok=True)
        return ended

    def progress(self, wanted: Mapping[str, Wanted]) -> dict[str, Piece]:
        """The lines of each running journal the driver lacks: from its length when the run
        and the file are the ones it has, else from the start."""
        pieces = {}
        for stem, (token, restarted, have) in wanted.items():
            with self._lock:
                run = self._runs.get(stem)
            read = _whole(self.folder / f"{stem}.jsonl")
            if run is None or read is None:
                continue
            inode, data = read
            data = data[: data.rfind(b"\n") + 1]  # whole lines only
            now = run[1] is not None and inode != run[1]
            start = have if (token, restarted) == (run[0], now) and have <= len(data) else 0
            pieces[stem] = (run[0], now, start, data[start:])
        return pieces


def _whole(trace: Path) -> tuple[int, bytes] | None:
    """The file's inode and bytes, read from one open file (None when there is none)."""
    try:
        with trace.open("rb") as handle:
            return os.fstat(handle.fileno()).st_ino, handle.read()
    except FileNotFoundError:
        return None


@dataclass
class _Have:
    token: str = ""
    restarted: bool = False
    length: int = 0  # of the journal written into DIR


class DriverJournals:
    """The driver's side: what goes to the actors, and what comes back into ``traces``."""

    def __init__(
        self, traces: Path, write: Callable[[Path, bytes], None], *, fsync: bool = True
    ) -> None:
        self.traces = traces
        self.write = write  # whole or not at all (a temporary file renamed over it)
        self.fsync = fsync
        self._have: dict[str, _Have] = {}
        self._aside: dict[str, Path] = {}  # stem: where its earlier journal went
        self._polls: dict[Any, int] = {}  # the pending requests for pieces: their actor
        self._next = 0.0

    def path(self, stem: str) -> Path:
        return self.traces / f"{stem}.jsonl"

    def to_send(self, stem: str, resume: bool) -> bytes | None:
        """The journal DIR holds for the episode, when ``--resume`` may continue it."""
        if not resume:
            return None
        try:
            return self.path(stem).read_bytes()
        except FileNotFoundError:
            return None

    def poll(self, ray: Any, actors: list[Any], running: Mapping[str, int]) -> None:
        """Take the pieces that came back; every ``STREAM_SECONDS``, ask each actor with
        episodes in ``running`` (stem: its actor) and no request pending for theirs."""
        if self._polls:
            ready, _ = ray.wait(list(self._polls), num_returns=len(self._polls), timeout=0)
            for ref in ready:
                del self._polls[ref]
                try:
                    pieces = ray.get(ref)
                except ray.exceptions.RayError:  # the actor died: its episode's outcome says
                    continue
                self.take(pieces, set(running))
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + STREAM_SECONDS
        stems: dict[int, list[str]] = {}
        for stem, number in running.items():
            stems.setdefault(number, []).append(stem)
        for number in set(stems) - set(self._polls.values()):
            self._polls[actors[number].progress.remote(self.wanted(stems[number]))] = number

    def wanted(self, stems: list[str]) -> dict[str, Wanted]:
        have = {stem: self._have.get(stem, _Have()) for stem in stems}
        return {stem: (h.token, h.restarted, h.length) for stem, h in have.items()}

    def take(self, pieces: Mapping[str, Piece], running: set[str]) -> None:
        """Each running episode's new lines, written over its journal in DIR."""
        for stem, (token, restarted, start, data) in pieces.items():
            have = self._have.get(stem)
            if stem not in running or not data:
                continue
            if have is not None and have.token == token and have.restarted > restarted:
                continue  # a late reply of the file the actor set aside since
            fresh = have is None or (have.token, have.restarted) != (token, restarted)
            if start != (0 if fresh or have is None else have.length):
                continue  # a reply to an older request
            if restarted:
                self._set_aside(stem)
            if fresh or have is None:
                self._have[stem] = _Have(token, restarted, len(data))
                self.write(self.path(stem), data)  # whole, over the journal DIR had
            else:
                have.length += len(data)
                self._append(self.path(stem), data)

    def _append(self, path: Path, data: bytes) -> None:
        """Whole lines after the ones written (a kill may tear the last: resume sets it
        aside, as it does the line a killed run tore)."""
        with path.open("ab") as handle:
            handle.write(data)
            if self.fsync:
                handle.flush()
                os.fsync(handle.fileno())

    def finish(
        self, stem: str, record: EpisodeRecord | None, ended: Ended | None
    ) -> EpisodeRecord | None:
        """The episode's final journal into DIR (the earlier one set aside when it started
        again); nothing changes without one. The record, telling where DIR's earlier journal
        went when it started again."""
        self._have.pop(stem, None)
        aside = self._set_aside(stem) if ended is not None and ended.restarted else None
        self._aside.pop(stem, None)
        if ended is None:
            return record
        if aside is not None and record is not None and record.restarted is not None:
            marks = {**record.restarted, "journal": f"traces/{aside.name}"}
            record = dataclasses.replace(record, restarted=marks)
        if ended.torn:
            with self.path(stem).with_name(f"{stem}.jsonl.torn").open("ab") as kept:
                kept.write(ended.torn)
        if ended.journal is not None:
            self.write(self.path(stem), ended.journal)
        return record

    def forget(self, stem: str) -> None:
        """An episode whose result will never come (abandoned): its journal stays as it is."""
        self._have.pop(stem, None)
        self._aside.pop(stem, None)

    def _set_aside(self, stem: str) -> Path | None:
        if stem not in self._aside and self.path(stem).exists():
            self._aside[stem] = set_aside(self.path(stem))
        return self._aside.get(stem)
