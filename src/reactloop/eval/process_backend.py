"""Episodes in worker processes (``--workers N``): every core used, on one machine.

Each worker is a child process running a ``LocalBackend`` of its own (its share of the
threads and of each endpoint's cap, its own endpoint gates); it saves each record and journal
into DIR itself, as the local backend does, and sends the record back. The driver keeps the
schedule (``dispatch``) and hands each episode to the worker with the fewest in flight. A
worker that dies loses only the episodes it had in flight: each is recorded ``errored``
(``reason: worker_died``) and ``--resume`` continues it from its journal (or starts it
again). A dead worker is not replaced: the others take the rest (and when none is left, the
rest is recorded ``worker_died`` too).
Specs travel pickled, so a ``Rung.factory`` must be importable (a module-level class or
function), not a lambda.

Workers are forked by multiprocessing's forkserver (where there is one: POSIX), which imports
once what every worker needs: the modules of reactloop, of the model SDKs and of their HTTP
stack that the driver has imported (``_preload``: the eval, the loop, the rungs' adapters
and SDKs, resolved by the driver's check of the models). So a worker starts warm, in a fork,
instead of a fresh interpreter importing all of it (1-3 s of CPU each); it is never forked
from the driver itself, whose threads (the progress bar, the report's feeder) a fork would
copy half-way. The forkserver starts with the first workers of a process and serves its
later evals too.
"""

from __future__ import annotations

import functools
import itertools
import math
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from reactloop.eval.backends import LocalBackend, stalled_record
from reactloop.eval.episode import EpisodeSpec, base_record
from reactloop.eval.store import ResultsStore
from reactloop.eval.throttle import EndpointGates

Record = dict[str, Any]
Save = Callable[[EpisodeSpec, Record], None]
PRELOADED = frozenset(
    {"reactloop", "openai", "anthropic", "httpx", "httpcore", "httpx2", "httpcore2", "h11"}
)
"""Packages whose modules the driver has imported, the forkserver imports too: reactloop's
and the model SDKs' with their HTTP stack (what they import comes along)."""
RUN_MODULES = ("reactloop.loop.run_loop", "reactloop.tools.custody", "encodings.idna")
"""What the first run of a process imports (the driver, which runs none, has not)."""


def _context() -> Any:
    """The forkserver, its preload set while it is not yet running; else spawn (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_preload())  # no effect once it runs: it keeps its first
    return context


def _preload() -> list[str]:
    """The driver's modules of ``PRELOADED``: reactloop's loaded from a file (not made at run
    time by their package) and no ``__main__`` (it would run a command in the forkserver); of
    the other packages only the top one, which imports nearly all its SDK needs (``openai``:
    520 of the 537 modules of a chat call). The names go on the forkserver's command line, one
    argument of at most 128 KiB (Linux's ``MAX_ARG_STRLEN``): a driver that had loaded some
    4,000 modules (a test session) got no forkserver at all, its workers never started."""
    loaded = {
        name if name.partition(".")[0] == "reactloop" else name.partition(".")[0]
        for name, module in list(sys.modules.items())
        if name.partition(".")[0] in PRELOADED
        and getattr(module, "__file__", None)
        and not name.endswith("__main__")
    }
    return sorted(loaded | {__name__, *RUN_MODULES})


def _worker(
    connection: Connection, traces: Path, threads: int, caps: dict[str, int], fsync: bool
) -> None:
    """The child: run each (number, spec) it gets; answer (number, record) when it ends.
    Ctrl-C reaches every process of the terminal's group: here it is ignored, for the driver
    owns it (it sends ``cancel``: the episodes in flight end cancelled, unrecorded)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = ResultsStore(traces.parent, fsync=fsync)
    gates = EndpointGates(caps, threads)
    backend = LocalBackend(threads, traces, lambda s, r: store.save(s.file_stem, r), gates)
    lock = threading.Lock()
    running: dict[int, tuple[Any, EpisodeSpec]] = {}

    def finished(number: int, spec: EpisodeSpec, future: Any) -> None:
        with lock:
            running.pop(number, None)
        try:
            record = future.result()
        except BaseException as exc:  # a bug: the episode is errored, the worker goes on
            record = base_record(spec, 0.0) | {"status": "errored", "error": repr(exc)}
        with lock:
            connection.send(("record", number, record))

    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):  # the driver is gone
            backend.cancel()
            return
        if message[0] == "run":
            _, number, spec = message
            handle = backend.submit(spec)
            with lock:
                running[number] = (handle, spec)
            handle.add_done_callback(functools.partial(finished, number, spec))
        elif message[0] == "abandon":
            with lock:
                found = running.pop(message[1], None)
            if found is not None:  # saved stalled here, so that a late record is never saved
                backend.abandon(*found)
        elif message[0] == "cancel":
            backend.cancel()
        elif message[0] == "close":
            backend.close()
            with lock:
                connection.send(("endpoints", gates.summaries()))
            return


class ProcessBackend:
    def __init__(
        self,
        workers: int,
        concurrency: int,
        traces: Path,
        save: Save,
        caps: dict[str, int] | None = None,
        fsync: bool = True,
    ) -> None:
        context = _context()
        threads = math.ceil(concurrency / workers)
        shares = {e: math.ceil(cap / workers) for e, cap in (caps or {}).items()}
        self.save = save
        self.connections: list[Connection] = []
        self.processes: list[Any] = []
        for _ in range(workers):
            mine, theirs = context.Pipe()
            process = context.Process(
                target=_worker, args=(theirs, traces, threads, shares, fsync), daemon=True
            )
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)
        self._numbers = itertools.count()
        self._where: dict[int, int] = {}  # episode number -> worker
        self._specs: dict[int, EpisodeSpec] = {}
        self._done: dict[int, Record | None] = {}
        self._endpoints: list[Record] = []

    def submit(self, spec: EpisodeSpec) -> int:
        number = next(self._numbers)
        loads = [0] * len(self.connections)
        for worker in self._where.values():
            loads[worker] += 1
        alive = [w for w in range(len(loads)) if not self.connections[w].closed]
        worker = min(alive, key=loads.__getitem__) if alive else 0
        self._where[number], self._specs[number] = worker, spec
        try:
            self.connections[worker].send(("run", number, spec))
        except (OSError, ValueError):
            self._lost(worker)
        return number

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        open_ = [c for c in self.connections if not c.closed]
        if not any(h in self._done for h in handles) and open_:
            for connection in wait(open_, timeout=timeout):
                self._read(connection)  # type: ignore[arg-type]
        return [h for h in handles if h in self._done]

    def _read(self, connection: Connection) -> None:
        worker = self.connections.index(connection)
        try:
            while connection.poll():
                kind, *rest = connection.recv()
                if kind == "record":
                    number, record = rest
                    self._where.pop(number, None)
                    self._done[number] = record
                else:
                    self._endpoints += [s | {"worker": worker} for s in rest[0]]
        except (EOFError, OSError):
            self._lost(worker)

    def _lost(self, worker: int) -> None:
        """A worker died: its in-flight episodes become errored, saved here."""
        self.connections[worker].close()
        for number in [n for n, w in self._where.items() if w == worker]:
            del self._where[number]
            spec = self._specs[number]
            record = base_record(spec, 0.0) | {
                "status": "errored",
                "reason": "worker_died",
                "error": f"worker process {worker} died while the episode ran",
            }
            self.save(spec, record)
            self._done[number] = record

    def outcome(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        self._specs.pop(handle, None)
        return self._done.pop(handle)

    def abandon(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        """The worker records it stalled (and never saves its late record); here when the
        worker is gone."""
        record = stalled_record(spec, journal="incomplete: its thread never came back")
        worker = self._where.pop(handle, None)
        self._specs.pop(handle, None)
        try:
            if worker is None or self.connections[worker].closed:
                raise OSError("no worker")
            self.connections[worker].send(("abandon", handle))
        except (OSError, ValueError):
            self.save(spec, record)
        return record

    def cancel(self) -> None:
        for connection in self.connections:
            if not connection.closed:
                connection.send(("cancel",))

    def endpoints(self) -> list[Record]:
        return list(self._endpoints)

    def close(self) -> None:
        for worker, connection in enumerate(self.connections):
            if connection.closed:
                continue
            try:
                connection.send(("close",))
                while connection.poll(30):
                    self._read(connection)
                    if connection.closed or self._endpoints_from(worker):
                        break
            except (OSError, ValueError):
                pass
            connection.close()
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()

    def _endpoints_from(self, worker: int) -> bool:
        return any(e.get("worker") == worker for e in self._endpoints)
