"""The results store: one JSON file per episode under ``DIR/episodes/``, written atomically.

A record is written to a temporary file in the same folder, flushed to disk and renamed over
its final name, so an eval killed at any point (SIGKILL included) leaves each episode either
complete or absent, never torn or twice. ``--resume`` keeps passed and failed episodes, runs
errored ones again and the ones never recorded; a task failure is never retried.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError

FINAL = frozenset({"passed", "failed"})
MANIFEST = "eval.json"


class ResultsStore:
    def __init__(self, out: str | Path, *, fsync: bool = True) -> None:
        self.out = Path(out)
        self.episodes = self.out / "episodes"
        self.traces = self.out / "traces"
        self.fsync = fsync
        self._lock = threading.Lock()
        self._counter = 0

    def prepare(self, manifest: dict[str, Any], *, resume: bool) -> dict[str, dict[str, Any]]:
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

    def load(self) -> dict[str, dict[str, Any]]:
        records: dict[str, dict[str, Any]] = {}
        for path in sorted(self.episodes.glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # unreadable: the episode runs again
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                records[record["key"]] = record
        return records

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

    def write_json_streamed(self, path: Path, data: Any) -> None:
        """``write_json`` for a large value: encoded piece by piece into the file, never held
        whole as one string (results.json of 20,000 episodes is some 60 MB of text)."""
        temporary = self._temporary(path)
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=1, default=str)
            handle.write("\n")
            self._flush(handle)
        os.replace(temporary, path)

    def _temporary(self, path: Path) -> Path:
        with self._lock:
            self._counter += 1
            return path.with_name(f".{path.name}.{os.getpid()}.{self._counter}.tmp")

    def _flush(self, handle: Any) -> None:
        if self.fsync:
            handle.flush()
            os.fsync(handle.fileno())


def is_final(record: dict[str, Any] | None) -> bool:
    return record is not None and record.get("status") in FINAL
