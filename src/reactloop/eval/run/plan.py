"""What an eval will run, before it runs: the config checked (a misspelt model or tool is a
usage error, not N errored episodes), every episode planned, and the manifest (``eval.json``).

Episode seeds: with ``seed`` given, repeat r of every task runs with seed ``seed + r``, so
repeats differ from each other and a rerun with the same seed reproduces them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import reactloop
from reactloop import Limits, resolve_model
from reactloop.errors import UsageError
from reactloop.eval.run.spec import EpisodeSpec, Rung
from reactloop.eval.tasks.tasks import Task
from reactloop.eval.tasks.toolset import EVAL_FAMILIES
from reactloop.tools.registry import parse_families


@dataclass(frozen=True, kw_only=True)
class EvalConfig:
    suite: str
    rungs: tuple[Rung, ...]
    out: Path
    repeats: int = 3
    concurrency: int = 4
    backend: str = "local"
    ray_address: str | None = None
    ray_actors: int | None = None  # None: one per Ray node, at least two
    workers: int | None = 1  # None: one a usable core, as the eval can use (eval/run/cores.py)
    resume: bool = False
    seed: int | None = None
    temperature: float | None = None
    limits: Limits = field(default_factory=lambda: Limits(max_seconds=300.0))
    episode_seconds: float | None = None
    tasks: tuple[Task, ...] | None = None
    progress: bool = False
    report: bool = True
    fsync: bool = True


def check(config: EvalConfig, tasks: list[Task]) -> None:
    """Raise ``UsageError`` for what would make the eval's episodes fail all alike."""
    _validate(config)
    _check_tools(tasks)
    if config.backend == "local":
        _check_models(config)


def plan(config: EvalConfig, tasks: list[Task]) -> list[EpisodeSpec]:
    """Every episode, repeat-major so that partial results cover every task and rung."""
    return [
        EpisodeSpec(
            suite=config.suite,
            task=task,
            rung=rung,
            protocol=protocol,
            repeat=repeat,
            seed=None if config.seed is None else config.seed + repeat,
            temperature=config.temperature,
            limits=config.limits,
            episode_seconds=config.episode_seconds,
            continue_journal=config.resume,
        )
        for repeat in range(config.repeats)
        for task in tasks
        for rung in config.rungs
        for protocol in rung.protocols
    ]


def positions(config: EvalConfig, tasks: list[Task]) -> Callable[[EpisodeSpec], int]:
    """Each episode's index in ``plan(config, tasks)``, from its repeat, task, rung and
    protocol: tables of the tasks and the rungs, none of every episode."""
    task_at = {id(task): n for n, task in reversed(list(enumerate(tasks)))}
    pairs = [(id(rung), protocol) for rung in config.rungs for protocol in rung.protocols]
    pair_at = {pair: n for n, pair in reversed(list(enumerate(pairs)))}
    per_task = len(pairs)
    per_repeat = len(tasks) * per_task

    def position(spec: EpisodeSpec) -> int:
        pair = pair_at[(id(spec.rung), spec.protocol)]
        return spec.repeat * per_repeat + task_at[id(spec.task)] * per_task + pair

    return position


def _validate(config: EvalConfig) -> None:
    if config.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if config.concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    if config.workers is not None and config.workers < 1:
        raise UsageError("--workers must be at least 1")
    if config.episode_seconds is not None and not config.episode_seconds > 0:
        raise UsageError("--episode-seconds must be more than 0")
    if not config.rungs:
        raise UsageError("name at least one model: --model SPEC or --models FILE")
    if config.backend not in ("local", "ray"):
        raise UsageError(f"--backend must be local or ray, not {config.backend!r}")
    labels = [r.label for r in config.rungs]
    if len(set(labels)) != len(labels):
        raise UsageError("rung labels must be unique")


def _check_tools(tasks: list[Task]) -> None:
    for task in tasks:
        try:
            parse_families(",".join(n for n in task.tools if n not in EVAL_FAMILIES))
        except UsageError as exc:
            raise UsageError(f"task {task.id}: {exc}") from None


def _check_models(config: EvalConfig) -> None:
    """Resolve each spec once, so that a misspelt one is a usage error, not N errored episodes."""
    for rung in config.rungs:
        if rung.factory is None:
            resolve_model(rung.spec, rung.settings(config.seed, config.temperature))


def manifest(config: EvalConfig, tasks: list[Task]) -> dict[str, Any]:
    return {
        "suite": config.suite,
        "tasks": [task.id for task in tasks],
        "rungs": [
            {
                "label": r.label,
                "spec": r.spec,
                "base_url": r.base_url,
                "protocols": list(r.protocols),
                "concurrency": r.concurrency,
                "prices": r.prices,
            }
            for r in config.rungs
        ],
        "repeats": config.repeats,
        "seed": config.seed,
        "temperature": config.temperature,
        "concurrency": config.concurrency,
        "episode_seconds": config.episode_seconds,
        "backend": config.backend,
        "workers": "auto" if config.workers is None else config.workers,
        "reactloop_version": reactloop.__version__,
        "python": sys.version.split()[0],
    }
