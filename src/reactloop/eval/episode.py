"""One episode: a task, a rung of the ladder, a protocol and a repeat, run through ``Agent.run``
with its own journal, then checked. The record it returns is plain JSON.

``errored`` (the provider failed: ``model_error``, or the harness could not run the episode)
is kept apart from ``failed`` (the model's answer or trajectory did not solve the task, or its
history outgrew the model's context). An episode that outlasts ``episode_seconds`` (shorter
than its own time limit) is stopped by the run's deadline, its journal complete, and recorded
``errored`` with ``reason: stalled``. A cancelled episode returns None: it is not recorded, so
``--resume`` runs it again. With ``continue_journal`` (``--resume``), an episode that left a
journal continues from it when it can, else starts again (``continued.py``).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import reactloop
from reactloop import (
    Agent,
    Limits,
    Model,
    ModelSettings,
    StopReason,
    Tool,
    Usage,
    read_journal,
    resolve_model,
)
from reactloop.eval.agent_tree import sub_agent_tools, tree_stats
from reactloop.eval.continued import Attempt, one_run, start_attempt
from reactloop.eval.health import HealthTally, journal_stats
from reactloop.eval.tasks import Task, check_answer
from reactloop.eval.throttle import EndpointGates, GatedModel
from reactloop.eval.toolset import episode_tools
from reactloop.usage import Price

ERRORED_STOPS = frozenset({StopReason.MODEL_ERROR, StopReason.JOURNAL_ERROR})
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


class CancelScope:
    """The agents running now, so that Ctrl-C can cancel every one of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._agents: set[Agent] = set()
        self.cancelled = threading.Event()

    def add(self, agent: Agent) -> None:
        with self._lock:
            self._agents.add(agent)
            if self.cancelled.is_set():
                agent.cancel()

    def discard(self, agent: Agent) -> None:
        with self._lock:
            self._agents.discard(agent)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled.set()
            for agent in self._agents:
                agent.cancel()


def run_episode(
    spec: EpisodeSpec,
    trace: Path,
    scope: CancelScope | None = None,
    gates: EndpointGates | None = None,
) -> dict[str, Any] | None:
    """Run and check one episode; its journal goes to ``trace``. None when cancelled. With
    ``gates``, its model calls go through its endpoint's gate (``throttle.py``)."""
    if scope is not None and scope.cancelled.is_set():
        return None
    started = time.time()
    attempt = record = None
    try:
        attempt = start_attempt(spec, trace, lambda ws, limits: _agent(spec, ws, limits, gates))
        record = _run(spec, trace, attempt, scope, started)
        return record
    except Exception as exc:  # the harness could not run it: errored, retried by --resume
        return base_record(spec, started) | {
            "status": "errored",
            "error": f"{type(exc).__name__}: {exc}",
        }
    finally:
        if attempt is not None:
            attempt.clean_up(record)


def _agent(
    spec: EpisodeSpec, workspace: Path | None, limits: Limits, gates: EndpointGates | None
) -> tuple[Agent, list[Tool]]:
    tools = episode_tools(spec.task, workspace)
    tools += sub_agent_tools(spec.task, workspace, lambda: _model(spec, gates), limits)
    agent = Agent(
        _model(spec, gates),
        tools,
        limits=limits,
        protocol="text" if spec.protocol == "text" else "native",
        config={} if workspace is None else {"workspace": str(workspace)},
    )
    return agent, tools


def _run(
    spec: EpisodeSpec,
    trace: Path,
    attempt: Attempt,
    scope: CancelScope | None,
    started: float,
) -> dict[str, Any] | None:
    agent = attempt.agent
    tally = HealthTally()  # the record's figures, counted as the events go to the journal
    if scope is not None:
        scope.add(agent)
    try:
        result = attempt.execute(trace, spec.task.task, tally)
    finally:
        if scope is not None:
            scope.discard(agent)
    if result.stop_reason == StopReason.CANCELLED:
        return None
    # a continued run is counted from its whole journal, as one run (a call re-run counts once)
    stats = tally.stats() if attempt.state is None else journal_stats(one_run(read_journal(trace)))
    stats, tree = tree_stats(stats, trace, spec.rung.cost)  # a tree of agents scored as one
    record = base_record(spec, started) | outcome(result.to_dict(), stats, spec.rung) | tree
    record["tools"] = sorted(t.name for t in attempt.tools)
    record |= attempt.marks()
    if result.stop_reason in ERRORED_STOPS and result.error_kind != "context_length":
        record["status"] = "errored"
        return record
    if result.stop_reason == StopReason.TIMEOUT and attempt.stall_cut:
        return record | stalled(spec)
    verdict = check_answer(
        spec.task,
        result.answer,
        called=stats["called"],
        attempted=stats["attempted"],
        workspace=attempt.workspace,
    )
    record["status"] = "passed" if verdict.passed else "failed"
    record["check_detail"] = verdict.detail
    return record


def _model(spec: EpisodeSpec, gates: EndpointGates | None) -> Model:
    if gates is None:
        return spec.rung.build(spec)
    gate = gates.gate(spec.rung.endpoint)
    inner = spec.rung.build(spec, retries=0)  # the gate retries, so that it sees each refusal
    return GatedModel(inner, gate, max_retries=spec.rung.max_retries)


def stalled(spec: EpisodeSpec, journal: str = "complete") -> dict[str, Any]:
    """What marks an episode stopped by ``--episode-seconds``: errored, continued by --resume."""
    if spec.episode_seconds is not None:
        within = f"--episode-seconds {spec.episode_seconds:g}"
    else:  # given up by the scheduler at its run's own limit (the run ignored it)
        within = f"its --max-seconds {spec.limits.max_seconds or 0:g}"
    return {
        "status": "errored",
        "reason": "stalled",
        "error": f"stalled: no end within {within}",
        "journal": journal,
    }


def base_record(spec: EpisodeSpec, started: float) -> dict[str, Any]:
    return {
        "key": spec.key,
        "suite": spec.suite,
        "task_id": spec.task.id,
        "repeat": spec.repeat,
        "rung": spec.rung.label,
        "model": spec.rung.spec,
        "base_url": spec.rung.base_url,
        "protocol": spec.protocol,
        "seed": spec.seed,
        "temperature": spec.temperature,
        "reactloop_version": reactloop.__version__,
        "expected": spec.task.expected,
        "started": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "trace": f"traces/{spec.file_stem}.jsonl",
    }


def outcome(result: dict[str, Any], stats: dict[str, Any], rung: Rung) -> dict[str, Any]:
    return {
        "answer": result["answer"],
        "stop_reason": result["stop_reason"],
        "forced": result["forced"],
        "error": result["error"],
        "error_kind": result["error_kind"],
        "model_calls": result["model_calls"],
        "tool_calls": result["tool_calls"],
        "usage": result["usage"],
        "cost": rung.cost(result["usage"]),
        "seconds": result["seconds"],
        "server_model": stats["server_model"],
        "health": stats["health"],
        "steps": stats["steps"],
        "called": stats["attempted"],
    }
