"""Where episodes run, and the scheduler that keeps C of them in flight.

``dispatch`` holds at most ``concurrency`` episodes in flight, and at most each endpoint's cap
on that endpoint, filling free slots round-robin over the endpoints so that one slow server does
not take every slot. Each time it wakes it costs what finished, not what is in flight: a
backend answers the episodes that finished and whose records are not yet taken (again until
they are: a Ctrl-C may land anywhere), and the bounds wait in a heap
(at C = 512 it scanned all 512 each time an episode ended). A backend runs one episode per
``submit``: ``LocalBackend`` in a thread pool, ``RayBackend``
(``reactloop.eval.run.ray_backend``) as calls to Ray actors. Within an episode, the local
backend's model calls also pass their endpoint's adaptive gate (``throttle.py``).
"""

from __future__ import annotations

import concurrent.futures as futures
import dataclasses
import heapq
import itertools
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.episode import CancelScope, base_record, run_episode, stalled
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.run.throttle import EndpointGates

STALL_GRACE = 2.0  # seconds past its --episode-seconds before an episode is given up
RUN_GRACE = 30.0
"""Seconds past its run's own ``max_seconds`` before an episode without ``episode_seconds``
is given up: the loop ends a run by itself a few seconds past that limit (a model call that
ignores it is left 3 s later), so this catches only what the loop cannot see (a factory that
never returns, a worker process stopped)."""
OnDone = Callable[[EpisodeSpec, EpisodeRecord | None], None]


class Backend(Protocol):
    def submit(self, spec: EpisodeSpec) -> Any: ...

    def wait(self, timeout: float) -> list[Any]:
        """Handles submitted that finished and whose ``outcome`` is not yet taken (waits up to
        ``timeout`` for one): answered again until it is, so that a Ctrl-C landing anywhere
        loses none; a handle given up by ``abandon`` may still come, and is ignored."""
        ...

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        """The record of a finished episode, saved with its journal in ``traces``; None when
        the episode was cancelled."""
        ...

    def abandon(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        """Give up an episode that never came back: its ``stalled`` record, saved (or its
        own record, when it finished after all)."""
        ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class _Claim:
    """Who saves an episode's record: its thread when it finishes, or the scheduler when it
    gives the episode up as stalled; whichever comes first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = False

    def take(self) -> bool:
        with self._lock:
            first, self._taken = not self._taken, True
            return first


class LocalBackend:
    """Episodes in a pool of ``concurrency`` threads; journals written straight to ``traces``.
    ``save(spec, record)`` runs in the episode's thread, so that records are written (and
    flushed to disk) in parallel rather than one by one in the scheduler's thread. A thread
    given up as stalled keeps running in the old pool; later episodes get a new pool."""

    def __init__(
        self,
        concurrency: int,
        traces: Path,
        save: Callable[[EpisodeSpec, EpisodeRecord], None] | None = None,
        gates: EndpointGates | None = None,
    ) -> None:
        self.traces = traces
        self.save = save
        self.gates = gates
        self.scope = CancelScope()
        self.concurrency = concurrency
        self._claims: dict[Any, _Claim] = {}
        self._pool = self._new_pool()
        self._ready = threading.Condition()  # guards ``_claims`` and ``_finished``
        self._finished: dict[Any, None] | None = None  # made by the first ``wait``

    def _new_pool(self) -> futures.ThreadPoolExecutor:
        return futures.ThreadPoolExecutor(self.concurrency, thread_name_prefix="reactloop-eval")

    def submit(self, spec: EpisodeSpec) -> futures.Future[EpisodeRecord | None]:
        claim = _Claim()
        handle = self._pool.submit(self._run, spec, claim)
        with self._ready:
            self._claims[handle] = claim
        if self._finished is not None:
            handle.add_done_callback(self._finish)
        return handle

    def _finish(self, handle: Any) -> None:
        """A future's done callback (in its thread): it is answered by ``wait``."""
        with self._ready:
            if handle in self._claims and self._finished is not None:  # else given up
                self._finished[handle] = None
                self._ready.notify()

    def _run(self, spec: EpisodeSpec, claim: _Claim) -> EpisodeRecord | None:
        trace = self.traces / f"{spec.file_stem}.jsonl"
        record = run_episode(spec, trace, self.scope, self.gates)
        if record is not None and claim.take() and self.save is not None:
            self.save(spec, record)
        return record

    def wait(self, timeout: float) -> list[Any]:
        if self._finished is None:  # a worker process never waits: it keeps none of them
            with self._ready:
                self._finished = {}
                claimed = list(self._claims)
            for handle in claimed:
                handle.add_done_callback(self._finish)
        with self._ready:
            if not self._finished:
                self._ready.wait(max(timeout, 0.0))
            return list(self._finished)

    def _take(self, handle: Any) -> _Claim | None:
        with self._ready:
            if self._finished is not None:
                self._finished.pop(handle, None)
            return self._claims.pop(handle, None)

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        self._take(handle)
        result: EpisodeRecord | None = handle.result()
        return result

    def abandon(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        claim = self._take(handle)
        assert claim is not None, "an episode given up twice"
        if not claim.take():  # it finished as we gave up on it
            return self.outcome(handle, spec)
        record = stalled_record(spec, journal="incomplete: its thread never came back")
        if self.save is not None:
            self.save(spec, record)
        self._pool.shutdown(wait=False)
        self._pool = self._new_pool()
        return record

    def cancel(self) -> None:
        self.scope.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def stalled_record(spec: EpisodeSpec, journal: str) -> EpisodeRecord:
    started = time.time() - (spec.episode_seconds or spec.limits.max_seconds or 0.0)
    return dataclasses.replace(base_record(spec, started), **stalled(spec, journal))


def bound(spec: EpisodeSpec) -> float | None:
    """How long the scheduler waits for an episode: ``STALL_GRACE`` past its
    ``episode_seconds``, else ``RUN_GRACE`` past its run's own ``max_seconds`` (each bounds
    every attempt); None only when both are None."""
    if spec.episode_seconds is not None:
        return spec.episode_seconds + STALL_GRACE
    if spec.limits.max_seconds is not None:
        return spec.limits.max_seconds + RUN_GRACE
    return None


def dispatch(
    backend: Backend,
    specs: Iterable[EpisodeSpec],
    *,
    concurrency: int,
    caps: dict[str, int],
    on_done: OnDone,
) -> bool:
    """Run every episode; False when Ctrl-C stopped it (in-flight episodes are drained).

    An episode still in flight past its ``bound`` (its model or a tool ignored the run's
    deadline, its factory never returned, its worker stopped) is given up: recorded
    ``stalled``."""
    queues: dict[str, deque[EpisodeSpec]] = defaultdict(deque)
    for spec in specs:
        queues[spec.rung.endpoint].append(spec)
    flight = _Flight()
    try:
        while queues or flight.running:
            _fill(backend, queues, flight, concurrency, caps)
            _collect(backend, flight, on_done)
    except KeyboardInterrupt:
        backend.cancel()
        while flight.running:
            _collect(backend, flight, on_done)
        return False
    return True


class _Bounds:
    """When each episode in flight is given up (``bound``), earliest first. The heap holds
    numbers, not handles: a finished handle (a future holding its record) is let go at once."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._order = itertools.count()
        self._handles: dict[int, Any] = {}  # in flight, by their number in the heap
        self._numbers: dict[Any, int] = {}

    def start(self, handle: Any, spec: EpisodeSpec) -> None:
        limit = bound(spec)
        if limit is not None:
            number = next(self._order)
            self._handles[number], self._numbers[handle] = handle, number
            heapq.heappush(self._heap, (time.monotonic() + limit, number))

    def end(self, handle: Any) -> None:
        number = self._numbers.pop(handle, None)
        if number is not None:
            del self._handles[number]

    def passed(self) -> Iterator[Any]:
        """The handles in flight whose bound has passed, each taken out as it is yielded (what
        is not yet yielded when the caller stops, on Ctrl-C, stays for the next time)."""
        now = time.monotonic()
        while self._heap and self._heap[0][0] < now:
            handle = self._handles.pop(heapq.heappop(self._heap)[1], None)
            if handle is not None:  # else it ended before its bound
                del self._numbers[handle]
                yield handle


@dataclasses.dataclass
class _Flight:
    """The episodes in flight: by handle, by endpoint and by bound."""

    running: dict[Any, EpisodeSpec] = dataclasses.field(default_factory=dict)
    busy: dict[str, int] = dataclasses.field(default_factory=lambda: defaultdict(int))
    bounds: _Bounds = dataclasses.field(default_factory=_Bounds)


def _fill(
    backend: Backend,
    queues: dict[str, deque[EpisodeSpec]],
    flight: _Flight,
    concurrency: int,
    caps: dict[str, int],
) -> None:
    running, busy = flight.running, flight.busy
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
            handle = backend.submit(spec)
            running[handle] = spec
            flight.bounds.start(handle, spec)
            busy[endpoint] += 1
            added = True


def _collect(backend: Backend, flight: _Flight, on_done: OnDone) -> None:
    for handle in backend.wait(timeout=0.5):  # what ``on_done`` did not take comes again
        spec = flight.running.pop(handle, None)
        if spec is None:
            continue  # given up before it finished
        flight.bounds.end(handle)
        flight.busy[spec.rung.endpoint] -= 1
        on_done(spec, backend.outcome(handle, spec))
    for handle in flight.bounds.passed():
        spec = flight.running.pop(handle)
        flight.busy[spec.rung.endpoint] -= 1
        on_done(spec, backend.abandon(handle, spec))
