"""The results store: one JSON file per episode under ``DIR/episodes/``, written atomically.

A record is written to a temporary file in the same folder, flushed to disk and renamed over
its final name, so an eval killed at any point (SIGKILL included) leaves each episode either
complete or absent, never torn or twice. ``--resume`` keeps passed and failed episodes, runs
errored ones again and the ones never recorded; a task failure is never retried.

The driver keeps no record: ``load`` answers each episode's status and file, and
``StoredRecords`` reads the records back from their files, one at a time, each time they are
walked (the report streams them in their JSON form; an eval of 20,000 episodes holds one);
``StoredEpisodes`` reads them as ``EpisodeRecord``s (``EvalOutcome.records``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol, overload

from reactloop.errors import UsageError
from reactloop.eval.records.record import EpisodeRecord

FINAL = frozenset({"passed", "failed"})
MANIFEST = "eval.json"


class Stored(NamedTuple):
    """A record on disk: its status and the stem of its file under ``episodes/``."""

    status: Any
    stem: str


class ResultsStore:
    def __init__(self, out: str | Path, *, fsync: bool = True) -> None:
        self.out = Path(out)
        self.episodes = self.out / "episodes"
        self.traces = self.out / "traces"
        self.fsync = fsync
        self._lock = threading.Lock()
        self._counter = 0

    def prepare(self, manifest: dict[str, Any], *, resume: bool) -> dict[str, Stored]:
        """Create the folders; return the records already there (by key) when resuming."""
        existing = self.episodes.is_dir() and any(self.episodes.glob("*.json"))
        if existing and not resume:
            raise UsageError(
                f"{self.out} already holds results: add --resume, or pick another --out"
            )
        self.episodes.mkdir(parents=True, exist_ok=True)
        self.traces.mkdir(parents=True, exist_ok=True)
        for stale in self.episodes.glob("*.tmp"):
            stale.unlink(missing_ok=True)  # a write the kill interrupted: never renamed
        self.write_json(self.out / MANIFEST, manifest)
        return self.load() if resume else {}

    def load(self) -> dict[str, Stored]:
        """Each record's status and file, by key: one read of each file, none kept."""
        records: dict[str, Stored] = {}
        for path in sorted(self.episodes.glob("*.json")):
            record = self.read(path.stem)
            if record is not None:
                records[record["key"]] = Stored(EpisodeRecord.from_dict(record).status, path.stem)
        return records

    def read(self, stem: str) -> dict[str, Any] | None:
        """The record in ``episodes/STEM.json``; None when absent or unreadable."""
        found = self.read_with_text(stem)
        return None if found is None else found[0]

    def read_with_text(self, stem: str) -> tuple[dict[str, Any], str] | None:
        """``read``, and the file's text without its last newline: the record as
        ``write_json`` encoded it, for the report to copy rather than encode again."""
        try:
            text = (self.episodes / f"{stem}.json").read_text(encoding="utf-8")
            record = json.loads(text)
        except (OSError, ValueError):
            return None  # unreadable: the episode runs again
        if isinstance(record, dict) and isinstance(record.get("key"), str):
            return record, text.removesuffix("\n")
        return None

    def has(self, stem: str) -> bool:
        return (self.episodes / f"{stem}.json").is_file()

    def save(self, stem: str, record: dict[str, Any]) -> None:
        self.write_json(self.episodes / f"{stem}.json", record)

    def write_json(self, path: Path, data: Any) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
        self.write_text(path, text + "\n")

    def write_text(self, path: Path, text: str) -> None:
        self.write_bytes(path, text.encode("utf-8"))

    def write_bytes(self, path: Path, data: bytes) -> None:
        """Write ``path`` whole or not at all (a temporary file renamed over it)."""
        temporary = self._temporary(path)
        with temporary.open("wb") as handle:
            handle.write(data)
            self._flush(handle)
        os.replace(temporary, path)

    def write_pieces(self, path: Path, pieces: Iterable[str | IO[str]]) -> None:
        """``write_text`` of the pieces' concatenation, written as they come (a piece may be
        an open text file, copied from where it stands)."""
        with self.open_text(path) as handle:
            for piece in pieces:
                if isinstance(piece, str):
                    handle.write(piece)
                else:
                    shutil.copyfileobj(piece, handle)

    @contextlib.contextmanager
    def open_text(self, path: Path) -> Iterator[IO[str]]:
        """A text file to write ``path`` into, put in place whole when the block ends (and
        not at all when it raises)."""
        temporary = self._temporary(path)
        try:
            with temporary.open("w", encoding="utf-8", newline="") as handle:
                yield handle
                self._flush(handle)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)

    def _temporary(self, path: Path) -> Path:
        with self._lock:
            self._counter += 1
            return path.with_name(f".{path.name}.{os.getpid()}.{self._counter}.tmp")

    def _flush(self, handle: Any) -> None:
        if self.fsync:
            handle.flush()
            os.fsync(handle.fileno())


class Named(Protocol):
    @property
    def file_stem(self) -> str: ...


class Stems(Sequence[str]):
    """File stems, each given as itself or as what is named after it (an ``EpisodeSpec`` of
    the plan, alive anyway: 8 bytes each here rather than a string)."""

    def __init__(self, items: Sequence[str | Named]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Stems: ...

    def __getitem__(self, index: int | slice) -> str | Stems:
        if isinstance(index, slice):
            return Stems(self.items[index])
        item = self.items[index]
        return item if isinstance(item, str) else item.file_stem


class StoredRecords(Sequence[dict[str, Any]]):
    """The records of the files ``episodes/STEM.json``, in the order of ``stems``, read each
    time they are walked (a record whose file has become unreadable since is left out)."""

    def __init__(self, store: ResultsStore, stems: Sequence[str]) -> None:
        self.store = store
        self.stems = stems

    def __len__(self) -> int:
        return len(self.stems)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [r for s in self.stems[index] if (r := self.store.read(s)) is not None]
        record = self.store.read(self.stems[index])
        if record is None:
            raise IndexError(f"episode {self.stems[index]} is no longer readable")
        return record

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for record, _ in self.with_texts():
            yield record

    def with_texts(self) -> Iterator[tuple[dict[str, Any], str]]:
        """Each record with its file's text (``ResultsStore.read_with_text``)."""
        for stem in self.stems:
            found = self.store.read_with_text(stem)
            if found is not None:
                yield found


class StoredEpisodes(Sequence[EpisodeRecord]):
    """``StoredRecords`` read as ``EpisodeRecord``s: each read from its file when it is
    walked or indexed, none kept."""

    def __init__(self, stored: StoredRecords) -> None:
        self.stored = stored

    def __len__(self) -> int:
        return len(self.stored)

    @overload
    def __getitem__(self, index: int) -> EpisodeRecord: ...

    @overload
    def __getitem__(self, index: slice) -> list[EpisodeRecord]: ...

    def __getitem__(self, index: int | slice) -> EpisodeRecord | list[EpisodeRecord]:
        if isinstance(index, slice):
            return [EpisodeRecord.from_dict(record) for record in self.stored[index]]
        return EpisodeRecord.from_dict(self.stored[index])

    def __iter__(self) -> Iterator[EpisodeRecord]:
        return map(EpisodeRecord.from_dict, self.stored)
