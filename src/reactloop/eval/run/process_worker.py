"""The worker process of ``ProcessBackend``: its main thread reads the tasks pipe and nothing
else; a ``Writer`` thread sends the results (``reactloop.eval.run.pipes`` says why that cannot
deadlock)."""

from __future__ import annotations

import dataclasses
import functools
import signal
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from reactloop.eval.records.store import ResultsStore
from reactloop.eval.run.backends import LocalBackend
from reactloop.eval.run.episode import base_record
from reactloop.eval.run.memory import collect_less
from reactloop.eval.run.pipes import CLOSE_SECONDS, Writer
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.run.throttle import EndpointGates
from reactloop.eval.run.worker_messages import (
    Abandon,
    Cancel,
    Close,
    Endpoints,
    EpisodeDone,
    RunEpisode,
    ToWorker,
)
from reactloop.support.pipe_messages import receive


def serve(
    tasks: Connection,
    results: Connection,
    traces: Path,
    threads: int,
    caps: dict[str, int],
    fsync: bool,
) -> None:
    """The child: run each ``RunEpisode`` it gets; answer its ``EpisodeDone`` when it ends.
    Ctrl-C reaches every process of the terminal's group: here it is ignored, for the driver
    owns it (it sends ``Cancel``: the episodes in flight end cancelled, unrecorded)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    collect_less()
    worker = _Worker(Writer(results, "reactloop-eval-results"), traces, threads, caps, fsync)
    while True:
        try:
            message = receive(tasks)
        except (EOFError, OSError):  # the driver is gone
            worker.backend.cancel()
            return
        if not worker.handle(message):
            tasks.close()
            return


class _Worker:
    def __init__(
        self, writer: Writer, traces: Path, threads: int, caps: dict[str, int], fsync: bool
    ) -> None:
        store = ResultsStore(traces.parent, fsync=fsync)
        self.writer = writer
        self.gates = EndpointGates(caps, threads)
        self.backend = LocalBackend(
            threads, traces, lambda s, r: store.save(s.file_stem, r.to_dict()), self.gates
        )
        self._lock = threading.Lock()  # guards ``_running`` alone: never held across a send
        self._running: dict[int, tuple[Any, EpisodeSpec]] = {}

    def handle(self, message: ToWorker) -> bool:
        """Act on one message from the driver; False once it said ``Close``."""
        match message:
            case RunEpisode(number, spec):
                self._run(number, spec)
            case Abandon(number):
                with self._lock:
                    found = self._running.pop(number, None)
                if found is not None:  # saved stalled here, so that a late record is never saved
                    self.backend.abandon(*found)
            case Cancel():
                self.backend.cancel()
            case Close():
                self.backend.close()  # every record is queued before the endpoints
                self.writer.put(Endpoints(self.gates.summaries()))
                self.writer.close(CLOSE_SECONDS)
                return False
        return True

    def _run(self, number: int, spec: EpisodeSpec) -> None:
        handle = self.backend.submit(spec)
        with self._lock:
            self._running[number] = (handle, spec)
        handle.add_done_callback(functools.partial(self._finished, number, spec))

    def _finished(self, number: int, spec: EpisodeSpec, future: Any) -> None:
        with self._lock:
            self._running.pop(number, None)
        try:
            record = future.result()
        except BaseException as exc:  # a bug: the episode is errored, the worker goes on
            errored = base_record(spec, 0.0)
            record = dataclasses.replace(errored, status="errored", error=repr(exc))
        self.writer.put(EpisodeDone(number, record))
