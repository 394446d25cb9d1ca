"""The progress bar on stderr: where the episodes run (``label``: how many worker processes),
episodes done, the share passed so far, errored, and the ETA."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from reactloop.eval.records.record import EpisodeRecord


class EvalProgress:
    def __init__(
        self,
        total: int,
        recorded: Mapping[str, str | None],
        keys: Sequence[str],
        *,
        enabled: bool,
        label: str = "eval",
    ) -> None:
        done = [recorded[k] for k in keys if recorded.get(k) in ("passed", "failed")]
        self.passed = done.count("passed")
        self.scored = len(done)
        self.errored = 0
        self.enabled = enabled
        self._progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            disable=not enabled,
        )
        self._task = self._progress.add_task(
            "eval", total=total, completed=len(done), status=self._status()
        )

    def _status(self) -> str:
        share = f"{self.passed / self.scored:.0%}" if self.scored else "–"
        errored = f", {self.errored} errored" if self.errored else ""
        return f"passed {self.passed}/{self.scored} ({share}){errored}"

    def advance(self, record: EpisodeRecord) -> None:
        if record.errored:
            self.errored += 1
        else:
            self.scored += 1
            self.passed += record.passed
        self._progress.update(self._task, advance=1, status=self._status())

    def __enter__(self) -> EvalProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
