"""Episodes in worker processes (``--workers N``): every core used, on one machine.

Each worker is a child process (``process_worker``) running a ``LocalBackend`` of its own
(its share of the threads and of each endpoint's cap, its own endpoint gates); it saves each
record and journal into DIR itself, as the local backend does, and sends the record back.
The driver keeps the schedule (``dispatch``) and hands each episode to the worker with the
fewest in flight. A worker that dies loses only the episodes it had in flight: each is
recorded ``errored`` (``reason: worker_died``) and ``--resume`` continues it from its
journal (or starts it again). A dead worker is not replaced: the others take the rest (and
when none is left, the rest is recorded ``worker_died`` too). Specs travel pickled, so a
``Rung.factory`` must be importable (a module-level class or function), not a lambda. They
travel on two one-way pipes per worker, each end owned by one thread that does nothing else,
so that no full pipe can stop the eval (``pipes``, issue 40); a worker that reads nothing it
is sent for ``write_seconds`` is given up (killed, its episodes recorded ``worker_died``
saying so), and every wait here has a bound.

Workers are forked by multiprocessing's forkserver (where there is one: POSIX), which has
imported once what every worker needs (``forkserver.py``): a worker starts warm, in a fork,
instead of a fresh interpreter importing all of it (1-3 s of CPU each); never forked from the
driver itself, whose threads (the progress bar, the report's feeder) a fork would copy
half-way.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import queue
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.backends import stalled_record
from reactloop.eval.run.episode import base_record
from reactloop.eval.run.forkserver import worker_context
from reactloop.eval.run.pipes import CLOSE_SECONDS, WRITE_SECONDS, Reader, Writer
from reactloop.eval.run.process_worker import serve
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.run.worker_messages import (
    Abandon,
    Cancel,
    Close,
    EpisodeDone,
    FromWorker,
    RunEpisode,
)

JOIN_SECONDS = 10.0  # a closed worker's exit (a thread given up as stalled may keep it)
log = logging.getLogger("reactloop.eval")
Save = Callable[[EpisodeSpec, EpisodeRecord], None]


class ProcessBackend:
    def __init__(
        self,
        workers: int,
        concurrency: int,
        traces: Path,
        save: Save,
        caps: dict[str, int] | None = None,
        fsync: bool = True,
        write_seconds: float = WRITE_SECONDS,
    ) -> None:
        context = worker_context()
        threads = math.ceil(concurrency / workers)
        shares = {e: math.ceil(cap / workers) for e, cap in (caps or {}).items()}
        self.save = save
        self.write_seconds = write_seconds
        self._inbox: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.connections: list[Any] = []  # each worker's results (its Reader's pipe)
        self.writers: list[Writer] = []  # each worker's tasks
        self.processes: list[Any] = []
        for worker in range(workers):
            tasks_in, tasks_out = context.Pipe(duplex=False)
            results_in, results_out = context.Pipe(duplex=False)
            process = context.Process(
                target=serve,
                args=(tasks_in, results_out, traces, threads, shares, fsync),
                daemon=True,
            )
            process.start()
            tasks_in.close(), results_out.close()
            self.writers.append(Writer(tasks_out, f"reactloop-eval-tasks-{worker}"))
            self.connections.append(results_in)
            Reader(results_in, worker, self._inbox, f"reactloop-eval-results-{worker}")
            self.processes.append(process)
        self._numbers = itertools.count()
        self._where: dict[int, int] = {}  # episode number -> worker
        self._specs: dict[int, EpisodeSpec] = {}
        self._done: dict[int, EpisodeRecord | None] = {}
        self._endpoints: list[dict[str, Any]] = []
        self._gone: set[int] = set()  # workers whose results pipe ended
        self._why: dict[int, str] = {}  # workers given up (killed), and why
        self._closing = False  # close() asked the workers to exit

    def _usable(self, worker: int) -> bool:
        return worker not in self._gone and worker not in self._why

    def submit(self, spec: EpisodeSpec) -> int:
        number = next(self._numbers)
        self._specs[number] = spec
        loads = [0] * len(self.writers)
        for worker in self._where.values():
            loads[worker] += 1
        alive = [w for w in range(len(loads)) if self._usable(w)]
        if not alive:
            self._errored(number, "no worker process was left to run the episode")
            return number
        worker = min(alive, key=loads.__getitem__)
        self._where[number] = worker
        self.writers[worker].put(RunEpisode(number, spec))  # never blocks: its Writer sends
        return number

    def wait(self, timeout: float) -> list[Any]:
        self._check_writers()
        self._receive(0.0 if self._done else timeout)  # the workers' news, even with some here
        return list(self._done)

    def _receive(self, timeout: float) -> None:
        """Take what the workers sent: the first message within ``timeout``, then the rest
        already there."""
        try:
            worker, message = self._inbox.get(timeout=max(timeout, 0.0))
            while True:
                self._take(worker, message)
                worker, message = self._inbox.get_nowait()
        except queue.Empty:
            pass

    def _take(self, worker: int, message: FromWorker | None) -> None:
        if message is None:  # its results pipe ended: the worker exited, died or was killed
            self._gone.add(worker)
            self._lost(worker)
        elif isinstance(message, EpisodeDone):
            if self._where.pop(message.number, None) is not None:  # else abandoned, given up
                self._done[message.number] = message.record
        else:
            self._endpoints += [s | {"worker": worker} for s in message.summaries]

    def _check_writers(self) -> None:
        """A worker that has read nothing it was sent for ``write_seconds`` is given up: killed
        (its results, up to there, still come in; then its pipe ends)."""
        for worker, writer in enumerate(self.writers):
            if self._usable(worker) and writer.stuck(self.write_seconds):
                self._why[worker] = (
                    f"worker process {worker} read nothing the eval sent it for "
                    f"{self.write_seconds:g} s: it was stopped"
                )
                log.warning(self._why[worker])
                self.processes[worker].kill()

    def _lost(self, worker: int) -> None:
        """A worker is gone: its in-flight episodes become errored, saved here."""
        if not self._closing and self.processes[worker].is_alive():  # ended, not by its exit
            self.processes[worker].kill()
        why = self._why.get(worker, f"worker process {worker} died while the episode ran")
        for number in [n for n, w in self._where.items() if w == worker]:
            del self._where[number]
            self._errored(number, why)

    def _errored(self, number: int, error: str) -> None:
        spec = self._specs[number]
        record = dataclasses.replace(
            base_record(spec, 0.0), status="errored", reason="worker_died", error=error
        )
        self.save(spec, record)
        self._done[number] = record

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        self._specs.pop(handle, None)
        return self._done.pop(handle)

    def abandon(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        """The worker records it stalled (and never saves its late record); here when the
        worker is gone."""
        record = stalled_record(spec, journal="incomplete: its thread never came back")
        worker = self._where.pop(handle, None)
        self._specs.pop(handle, None)
        if worker is None or not self._usable(worker):
            self.save(spec, record)
        else:
            self.writers[worker].put(Abandon(handle))
        return record

    def cancel(self) -> None:
        for worker, writer in enumerate(self.writers):
            if self._usable(worker):
                writer.put(Cancel())

    def endpoints(self) -> list[dict[str, Any]]:
        return list(self._endpoints)

    def close(self) -> None:
        """Each worker sends its endpoints and exits; within ``CLOSE_SECONDS`` in all, else
        it is killed (with a warning). Every writer and reader thread ends with its pipe."""
        self._closing = True
        closing = [w for w in range(len(self.writers)) if self._usable(w)]
        for worker, writer in enumerate(self.writers):
            if worker in closing:
                writer.put(Close())
            writer.close()  # its thread sends what is queued, then closes the pipe
        deadline = time.monotonic() + CLOSE_SECONDS
        while waiting := [w for w in closing if not self._closed(w)]:
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("worker processes %s did not close within %g s", waiting, CLOSE_SECONDS)
                break
            self._receive(left)
        for process in self.processes:
            process.join(timeout=JOIN_SECONDS)
            if process.is_alive():
                process.kill()
                process.join(timeout=JOIN_SECONDS)

    def _closed(self, worker: int) -> bool:
        return worker in self._gone or any(e.get("worker") == worker for e in self._endpoints)
