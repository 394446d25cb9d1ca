"""What an episode is: a ``Rung`` of the ladder (a model and how to reach it) and an
``EpisodeSpec`` (a task on a rung, with a protocol and a repeat). Scheduling, running and
continuing an episode all read these."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reactloop import Limits, Model, ModelSettings, Usage, resolve_model
from reactloop.eval.tasks.tasks import Task
from reactloop.usage import Price

STATEFUL_PROVIDERS = frozenset({"scripted", "replay"})
_THREAD_MODELS = threading.local()


@dataclass(frozen=True, kw_only=True)
class Rung:
    """One model of the ladder. ``factory`` (Python API only) builds the model of an episode
    instead of ``resolve_model(spec)``; ``concurrency`` caps the episodes in flight on its
    endpoint (``base_url``, or the label when there is none)."""

    label: str
    spec: str
    base_url: str | None = None
    api_key_env: str | None = None
    prices: dict[str, float] | None = None
    protocols: tuple[str, ...] = ("native",)
    concurrency: int | None = None
    max_retries: int = 2
    factory: Callable[[EpisodeSpec], Model] | None = field(default=None, compare=False)

    @property
    def endpoint(self) -> str:
        return self.base_url or self.label

    def settings(
        self, seed: int | None, temperature: float | None, retries: int | None = None
    ) -> ModelSettings:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return ModelSettings(
            base_url=self.base_url,
            api_key=key,
            seed=seed,
            temperature=temperature,
            max_retries=self.max_retries if retries is None else retries,
        )

    def build(self, episode: EpisodeSpec, retries: int | None = None) -> Model:
        """The episode's model: from ``factory``, else resolved from ``spec`` (with
        ``retries`` instead of ``max_retries`` when given). A stateful spec (``scripted:``,
        ``replay:``) is resolved afresh each time; any other is resolved once per thread and
        settings and reused, as one agent serves many runs."""
        if self.factory is not None:
            return self.factory(episode)
        settings = self.settings(episode.seed, episode.temperature, retries)
        if self.spec.partition(":")[0].strip().lower() in STATEFUL_PROVIDERS:
            return resolve_model(self.spec, settings)
        cache: dict[Any, Model] = _THREAD_MODELS.__dict__.setdefault("models", {})
        key = (self.spec, self.base_url, episode.seed, episode.temperature, settings.max_retries)
        if key not in cache:
            cache[key] = resolve_model(self.spec, settings)
        return cache[key]

    def cost(self, usage: dict[str, int]) -> float | None:
        """Dollars for ``usage`` (a ``Usage`` as a dict) at ``prices`` (per million tokens),
        priced as ``reactloop cost`` does (``Price.cost``: cache reads and writes at their own
        rates); None without prices."""
        if not self.prices:
            return None
        return Price.from_rates(self.prices).cost(Usage.from_dict(usage))


@dataclass(frozen=True, kw_only=True)
class EpisodeSpec:
    suite: str
    task: Task
    rung: Rung
    protocol: str
    repeat: int
    seed: int | None = None
    temperature: float | None = None
    limits: Limits = field(default_factory=Limits)
    episode_seconds: float | None = None
    continue_journal: bool = False  # --resume: a journal left in ``trace`` goes on

    @property
    def key(self) -> str:
        return f"{self.rung.label}/{self.protocol}/{self.task.id}/{self.repeat}"

    @property
    def file_stem(self) -> str:
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in self.key.replace("/", "__"))

    @property
    def stall_limited(self) -> bool:
        """Whether ``episode_seconds`` ends the run before its own ``max_seconds`` would."""
        own = self.limits.max_seconds
        return self.episode_seconds is not None and (own is None or self.episode_seconds < own)

    def run_limits(self) -> Limits:
        """The run's limits, its time cut to ``episode_seconds`` when that is shorter."""
        if not self.stall_limited:
            return self.limits
        return dataclasses.replace(self.limits, max_seconds=self.episode_seconds)
