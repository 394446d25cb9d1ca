"""The messages between the eval's driver and a worker process (``pipes.py`` carries them).

Driver → worker, on the tasks pipe: ``RunEpisode``, ``Abandon``, ``Cancel``, ``Close``.
Worker → driver, on the results pipe: ``EpisodeDone`` for each episode that ended, then
``Endpoints`` once, after ``Close``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.spec import EpisodeSpec


@dataclass(frozen=True)
class RunEpisode:
    """Run ``spec``; answer with an ``EpisodeDone`` of the same ``number``."""

    number: int
    spec: EpisodeSpec


@dataclass(frozen=True)
class Abandon:
    """Episode ``number`` is given up as stalled: record it so, and never its late record."""

    number: int


@dataclass(frozen=True)
class Cancel:
    """Ctrl-C: the episodes in flight end cancelled, unrecorded."""


@dataclass(frozen=True)
class Close:
    """No more episodes: finish those in flight, send ``Endpoints``, exit."""


ToWorker = RunEpisode | Abandon | Cancel | Close


@dataclass(frozen=True)
class EpisodeDone:
    """Episode ``number`` ended: its record (None: cancelled, not recorded)."""

    number: int
    record: EpisodeRecord | None


@dataclass(frozen=True)
class Endpoints:
    """The worker's endpoints and their concurrency caps over the eval (``gates.summaries``)."""

    summaries: list[dict[str, Any]]


FromWorker = EpisodeDone | Endpoints
