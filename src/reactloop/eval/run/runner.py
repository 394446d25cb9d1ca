"""``run_eval(config)``: plan the episodes, skip the ones already recorded, run the rest on a
backend, store each record as it finishes, and write the report.

Episode seeds: with ``seed`` given, repeat r of every task runs with seed ``seed + r``, so
repeats differ from each other and a rerun with the same seed reproduces them.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import reactloop
from reactloop import Limits, resolve_model
from reactloop.errors import UsageError
from reactloop.eval.records.store import FINAL, ResultsStore, Stems, Stored, StoredRecords
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.write import write_report
from reactloop.eval.run.backends import Backend, LocalBackend, OnDone, dispatch
from reactloop.eval.run.cores import usable_cores, worker_count
from reactloop.eval.run.memory import release_freed_memory
from reactloop.eval.run.process_backend import ProcessBackend
from reactloop.eval.run.progress import EvalProgress
from reactloop.eval.run.ray_backend import RayBackend
from reactloop.eval.run.spec import EpisodeSpec, Rung
from reactloop.eval.run.throttle import EndpointGates
from reactloop.eval.tasks.suites import load_suite
from reactloop.eval.tasks.tasks import Task
from reactloop.eval.tasks.toolset import EVAL_FAMILIES
from reactloop.tools.registry import parse_families

TRIM_EVERY = 1000
"""Episodes between two returns of the freed heap to the system (``release_freed_memory``)."""
REPORT_CHILD_FROM = 64
"""Episodes to run from which the report's pages and charts are made in a child process (its
start and its matplotlib import, about 1 s of CPU, cost more than a few pages)."""


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


@dataclass(frozen=True, kw_only=True)
class EvalOutcome:
    out: Path
    records: Sequence[dict[str, Any]]  # read from DIR/episodes each time they are walked: a
    # later --resume into DIR changes them (list() keeps a copy)
    completed: bool
    ran: int
    skipped: int
    repeats: int
    endpoints: list[dict[str, Any]] = field(default_factory=list)
    workers: int = 1  # the worker processes it ran in (1: in this process)
    continued: int = 0  # episodes continued from their journals (--resume)
    restarted: int = 0  # episodes started again, their earlier journals set aside

    @property
    def errored(self) -> int:
        return sum(r["status"] == "errored" for r in self.records)  # one record at a time


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


def run_eval(
    config: EvalConfig, *, on_record: Callable[[dict[str, Any]], None] | None = None
) -> EvalOutcome:
    _validate(config)
    tasks = list(config.tasks) if config.tasks is not None else load_suite(config.suite)
    _check_tools(tasks)
    if config.backend == "local":
        _check_models(config)
    store = ResultsStore(config.out, fsync=config.fsync)
    stored = store.prepare(manifest(config, tasks), resume=config.resume)
    specs = plan(config, tasks)
    todo = [spec for spec in specs if stored.get(spec.key, _ABSENT).status not in FINAL]
    config = dataclasses.replace(config, workers=_workers(config, len(todo)))
    progress = EvalProgress(
        len(specs),
        {key: {"status": s.status} for key, s in stored.items()},
        [key for key in (s.key for s in specs) if key in stored],  # none but when resuming
        enabled=config.progress,
        label=_label(config),
    )
    made = {"continued": 0, "restarted": 0}
    moved = _moved(specs, stored)
    del stored  # the records are on disk: the driver keeps none of them
    report = None
    if config.report:  # pages and charts on another core, when they are worth its start-up
        report = ReportProcess(child=len(todo) >= REPORT_CHILD_FROM)

    finished = itertools.count(1)

    def done(spec: EpisodeSpec, record: dict[str, Any] | None) -> None:
        if record is None:
            return
        if report is not None:
            report.page(config.out, record)  # rendered by the report's child meanwhile
        made["continued"] += "resumed_from_step" in record
        made["restarted"] += "restarted" in record
        progress.advance(record)
        if on_record is not None:
            on_record(record)
        if next(finished) % TRIM_EVERY == 0:
            release_freed_memory()

    try:
        with progress:
            completed, endpoints = _run_episodes(config, store, todo, done, report)
    except BaseException:
        if report is not None:
            report.close()
        raise
    records = StoredRecords(store, _recorded(store, specs, moved))
    outcome = EvalOutcome(
        out=config.out,
        records=records,
        completed=completed,
        ran=len(todo),
        skipped=len(specs) - len(todo),
        repeats=config.repeats,
        endpoints=endpoints,
        workers=config.workers or 1,
        **made,
    )
    if config.report:
        release_freed_memory()  # the last episodes' heap, before the report walks the records
        write_report(
            config.out, records, k=config.repeats, endpoints=endpoints, report_process=report
        )
    return outcome


_ABSENT = Stored(None, "")


def _moved(specs: list[EpisodeSpec], stored: dict[str, Stored]) -> dict[str, str]:
    """The records resumed from a file not of their episode's name (by key)."""
    if not stored:
        return {}
    return {
        s.key: stored[s.key].stem
        for s in specs
        if s.key in stored and stored[s.key].stem != s.file_stem
    }


def _recorded(store: ResultsStore, specs: list[EpisodeSpec], moved: dict[str, str]) -> Stems:
    """The file of each planned episode that has a record, in plan order: this run's (saved
    under the episode's own name) or, when it did not run, the one resumed from."""
    found: list[EpisodeSpec | str] = []
    for spec in specs:
        if store.has(spec.file_stem):
            found.append(spec)
        elif spec.key in moved and store.has(moved[spec.key]):
            found.append(moved[spec.key])
    return Stems(found)


def _run_episodes(
    config: EvalConfig,
    store: ResultsStore,
    todo: list[EpisodeSpec],
    done: OnDone,
    report: ReportProcess | None,
) -> tuple[bool, list[dict[str, Any]]]:
    """Whether every episode ran, and each endpoint's cap history."""
    caps = {r.endpoint: r.concurrency for r in config.rungs if r.concurrency is not None}
    gates = EndpointGates(caps, config.concurrency)
    backend = _backend(config, store, gates, report)
    try:
        completed = dispatch(backend, todo, concurrency=config.concurrency, caps=caps, on_done=done)
    finally:
        backend.close()
    if isinstance(backend, RayBackend | ProcessBackend):
        return completed, backend.endpoints()  # kept by close, for each actor or worker
    return completed, gates.summaries()


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


def _workers(config: EvalConfig, episodes: int) -> int:
    """``workers``, or (None) the rule of ``eval/run/cores.py``; the Ray backend has none."""
    if config.backend != "local":
        return 1
    cores = usable_cores()
    return worker_count(
        config.workers, episodes=episodes, concurrency=config.concurrency, cores=cores
    )


def _label(config: EvalConfig) -> str:
    if config.backend != "local":
        return f"eval · {config.backend}"
    return f"eval · {config.workers} workers" if config.workers != 1 else "eval · 1 process"


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


def _backend(
    config: EvalConfig, store: ResultsStore, gates: EndpointGates, report: ReportProcess | None
) -> Backend:
    if report is not None:
        (config.out / "pages").mkdir(exist_ok=True)

    def save(spec: EpisodeSpec, record: dict[str, Any]) -> None:
        store.save(spec.file_stem, record)

    workers = config.workers or 1
    if workers > 1 and config.backend == "local":
        return ProcessBackend(
            workers, config.concurrency, store.traces, save, gates.caps, config.fsync
        )
    if config.backend == "ray":
        return RayBackend(
            config.concurrency,
            store.traces,
            address=config.ray_address,
            actors=config.ray_actors,
            write=store.write_bytes,
            save=save,
            caps=gates.caps,
            rungs=config.rungs,
            fsync=config.fsync,
        )
    return LocalBackend(config.concurrency, store.traces, save, gates)


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
