"""``run_eval(config)``: plan the episodes, skip the ones already recorded, run the rest on a
backend, store each record as it finishes, and write the report.

The config, its checks and the plan are ``plan.py``'s.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.records.store import (
    FINAL,
    ResultsStore,
    Stems,
    Stored,
    StoredEpisodes,
    StoredRecords,
)
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.write import StreamedReport
from reactloop.eval.run.backends import Backend, LocalBackend, OnDone, dispatch
from reactloop.eval.run.cores import usable_cores, worker_count
from reactloop.eval.run.forkserver import start_early
from reactloop.eval.run.memory import release_freed_memory
from reactloop.eval.run.plan import EvalConfig, check, manifest, plan, positions
from reactloop.eval.run.process_backend import ProcessBackend
from reactloop.eval.run.progress import EvalProgress
from reactloop.eval.run.ray_backend import RayBackend
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.run.throttle import EndpointGates
from reactloop.eval.tasks.suites import load_suite
from reactloop.eval.tasks.tasks import Task

TRIM_EVERY = 1000
"""Episodes between two returns of the freed heap to the system (``release_freed_memory``)."""
REPORT_CHILD_FROM = 64
"""Episodes to run from which the report's pages and charts are made in a child process (its
start costs more CPU than a few pages)."""


@dataclass(frozen=True, kw_only=True)
class EvalOutcome:
    out: Path
    records: Sequence[EpisodeRecord]  # read from DIR/episodes each time they are walked: a
    # later --resume into DIR changes them (list() keeps a copy)
    completed: bool
    ran: int
    skipped: int
    repeats: int
    endpoints: list[dict[str, Any]] = field(default_factory=list)
    workers: int = 1  # the worker processes it ran in (1: in this process)
    continued: int = 0  # episodes continued from their journals (--resume)
    restarted: int = 0  # episodes started again, their earlier journals set aside
    summary: list[dict[str, Any]] | None = None  # the report's per rung × protocol (None: none)

    @property
    def errored(self) -> int:
        return sum(r.errored for r in self.records)  # one at a time


OnRecord = Callable[[EpisodeRecord], None]


def run_eval(config: EvalConfig, *, on_record: OnRecord | None = None) -> EvalOutcome:
    """Run the episodes ``config`` plans that DIR does not hold yet; ``on_record`` gets each
    one's record as it ends (in the driver's thread)."""
    tasks = list(config.tasks) if config.tasks is not None else load_suite(config.suite)
    if config.backend == "local" and _workers(config, _planned(config, tasks)) > 1:
        start_early(rung.spec for rung in config.rungs if rung.factory is None)
    check(config, tasks)
    store = ResultsStore(config.out, fsync=config.fsync)
    stored = store.prepare(manifest(config, tasks), resume=config.resume)
    specs = plan(config, tasks)
    todo = [spec for spec in specs if stored.get(spec.key, _ABSENT).status not in FINAL]
    config = dataclasses.replace(config, workers=_workers(config, len(todo)))
    progress = EvalProgress(
        len(specs),
        {key: s.status for key, s in stored.items()},
        [key for key in (s.key for s in specs) if key in stored],  # none but when resuming
        enabled=config.progress,
        label=_label(config),
    )
    moved = _moved(specs, stored)
    del stored  # the records are on disk: the driver keeps none of them
    report = tables = None
    if config.report:  # pages and charts on another core, when they are worth its start-up
        report = ReportProcess(child=len(todo) >= REPORT_CHILD_FROM)
        tables = StreamedReport(config.out)  # each record taken into the tables as it arrives
    done = _Finished(config.out, progress, report, on_record)
    if tables is not None:
        done.tables = (tables, store, positions(config, tasks))
    try:
        with progress:
            completed, endpoints = _run_episodes(config, store, todo, done, report)
    except BaseException:
        if report is not None and tables is not None:
            report.close()
            tables.spool.close()
        raise
    records = StoredRecords(store, _recorded(store, specs, moved))
    summary = None
    if tables is not None:
        release_freed_memory()  # the last episodes' heap, before the report
        with tables:
            _take_the_rest(tables, store, specs, moved)
            data = tables.write(
                k=config.repeats, endpoints=endpoints, report_process=report, episodes=records
            )
        summary = data["summary"]
    return EvalOutcome(
        out=config.out,
        records=StoredEpisodes(records),
        completed=completed,
        ran=len(todo),
        skipped=len(specs) - len(todo),
        repeats=config.repeats,
        endpoints=endpoints,
        workers=config.workers or 1,
        continued=done.continued,
        restarted=done.restarted,
        summary=summary,
    )


_ABSENT = Stored(None, "")


class _Finished:
    """What the driver does as each episode ends (``OnDone``): its page to the report's
    child, the counts and the progress bar, the caller's ``on_record``, and every
    ``TRIM_EVERY`` episodes the freed heap given back."""

    def __init__(
        self,
        out: Path,
        progress: EvalProgress,
        report: ReportProcess | None,
        on_record: OnRecord | None,
    ) -> None:
        self.out, self.progress, self.report, self.on_record = out, progress, report, on_record
        self.continued = self.restarted = 0
        self._finished = itertools.count(1)
        self.tables: tuple[StreamedReport, ResultsStore, Callable[[EpisodeSpec], int]] | None
        self.tables = None  # the report's tables, the store, each episode's place in the plan

    def __call__(self, spec: EpisodeSpec, record: EpisodeRecord | None) -> None:
        if record is None:
            return
        if self.report is not None:
            self.report.page(self.out, record)  # rendered by the report's child meanwhile
        if self.tables is not None and not record.errored:
            tables, store, position = self.tables
            text = store.text(spec.file_stem)  # saved before it came: one read, no parse
            if text is not None:  # an errored one may be saved later (by a worker): at the end
                tables.add(position(spec), record, text)  # typed: no JSON form made again
        self.continued += record.resumed is not None
        self.restarted += record.restarted is not None
        self.progress.advance(record)
        if self.on_record is not None:
            self.on_record(record)
        if next(self._finished) % TRIM_EVERY == 0:
            release_freed_memory()


def _moved(specs: list[EpisodeSpec], stored: dict[str, Stored]) -> dict[str, str]:
    """The records resumed from a file not of their episode's name (by key)."""
    if not stored:
        return {}
    return {
        s.key: stored[s.key].stem
        for s in specs
        if s.key in stored and stored[s.key].stem != s.file_stem
    }


def _take_the_rest(
    tables: StreamedReport, store: ResultsStore, specs: list[EpisodeSpec], moved: dict[str, str]
) -> None:
    """Into the report, the records not taken as they arrived, read from their files: those
    recorded before (``--resume``) and the errored ones; the same files as ``_recorded``'s."""
    for position, spec in enumerate(specs):
        if position in tables:
            continue
        stem = spec.file_stem if store.has(spec.file_stem) else moved.get(spec.key)
        found = None if stem is None else store.read_with_text(stem)
        if found is not None:
            tables.add(position, *found)


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


def _planned(config: EvalConfig, tasks: list[Task]) -> int:
    """The episodes ``config`` plans at most (``--resume`` may leave some out)."""
    return len(tasks) * config.repeats * sum(len(rung.protocols) for rung in config.rungs)


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


def _backend(
    config: EvalConfig, store: ResultsStore, gates: EndpointGates, report: ReportProcess | None
) -> Backend:
    if report is not None:
        (config.out / "pages").mkdir(exist_ok=True)

    def save(spec: EpisodeSpec, record: EpisodeRecord) -> None:
        store.save(spec.file_stem, record.to_dict())

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
