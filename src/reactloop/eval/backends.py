"""Where episodes run, and the scheduler that keeps C of them in flight.

``dispatch`` holds at most ``concurrency`` episodes in flight, and at most each endpoint's cap
on that endpoint, filling free slots round-robin over the endpoints so that one slow server does
not take every slot. A backend runs one episode per ``submit``: ``LocalBackend`` in a thread
pool, ``RayBackend`` (``reactloop.eval.ray_backend``) as calls to Ray actors. Within an episode,
the local backend's model calls also pass their endpoint's adaptive gate (``throttle.py``).
"""

from __future__ import annotations

import concurrent.futures as futures
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from reactloop.eval.episode import CancelScope, EpisodeSpec, run_episode
from reactloop.eval.throttle import EndpointGates

Record = dict[str, Any]
OnDone = Callable[[EpisodeSpec, "Record | None"], None]


class Backend(Protocol):
    def submit(self, spec: EpisodeSpec) -> Any: ...

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        """The handles among ``handles`` that have finished (waits up to ``timeout``)."""
        ...

    def outcome(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        """The record of a finished episode, saved with its journal in ``traces``; None when
        the episode was cancelled."""
        ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class LocalBackend:
    """Episodes in a pool of ``concurrency`` threads; journals written straight to ``traces``.
    ``save(spec, record)`` runs in the episode's thread, so that records are written (and
    flushed to disk) in parallel rather than one by one in the scheduler's thread."""

    def __init__(
        self,
        concurrency: int,
        traces: Path,
        save: Callable[[EpisodeSpec, Record], None] | None = None,
        gates: EndpointGates | None = None,
    ) -> None:
        self.traces = traces
        self.save = save
        self.gates = gates
        self.scope = CancelScope()
        self._pool = futures.ThreadPoolExecutor(concurrency, thread_name_prefix="reactloop-eval")

    def submit(self, spec: EpisodeSpec) -> futures.Future[Record | None]:
        return self._pool.submit(self._run, spec)

    def _run(self, spec: EpisodeSpec) -> Record | None:
        trace = self.traces / f"{spec.file_stem}.jsonl"
        record = run_episode(spec, trace, self.scope, self.gates)
        if record is not None and self.save is not None:
            self.save(spec, record)
        return record

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        done, _ = futures.wait(handles, timeout=timeout, return_when=futures.FIRST_COMPLETED)
        return list(done)

    def outcome(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        result: Record | None = handle.result()
        return result

    def cancel(self) -> None:
        self.scope.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def dispatch(
    backend: Backend,
    specs: Iterable[EpisodeSpec],
    *,
    concurrency: int,
    caps: dict[str, int],
    on_done: OnDone,
) -> bool:
    """Run every episode; False when Ctrl-C stopped it (in-flight episodes are drained)."""
    queues: dict[str, deque[EpisodeSpec]] = defaultdict(deque)
    for spec in specs:
        queues[spec.rung.endpoint].append(spec)
    running: dict[Any, EpisodeSpec] = {}
    busy: dict[str, int] = defaultdict(int)
    try:
        while queues or running:
            _fill(backend, queues, running, busy, concurrency, caps)
            _collect(backend, running, busy, on_done)
    except KeyboardInterrupt:
        backend.cancel()
        while running:
            _collect(backend, running, busy, on_done)
        return False
    return True


def _fill(
    backend: Backend,
    queues: dict[str, deque[EpisodeSpec]],
    running: dict[Any, EpisodeSpec],
    busy: dict[str, int],
    concurrency: int,
    caps: dict[str, int],
) -> None:
    added = True
    while added and len(running) < concurrency:
        added = False
        for endpoint in list(queues):
            if len(running) >= concurrency:
                break
            if busy[endpoint] >= caps.get(endpoint, concurrency):
                continue
            spec = queues[endpoint].popleft()
            if not queues[endpoint]:
                del queues[endpoint]
            running[backend.submit(spec)] = spec
            busy[endpoint] += 1
            added = True


def _collect(
    backend: Backend, running: dict[Any, EpisodeSpec], busy: dict[str, int], on_done: OnDone
) -> None:
    for handle in backend.wait(list(running), timeout=0.5):
        spec = running.pop(handle)
        busy[spec.rung.endpoint] -= 1
        on_done(spec, backend.outcome(handle, spec))
