"""Episodes as calls to Ray actors: on a local Ray, or an existing cluster (``--ray-address``).

Each actor is a threaded Ray actor running ``run_episode`` as the local backend does; it writes
the episode's journal to its own temporary folder and returns it with the record, so the
driver writes every result and journal into DIR itself and no shared filesystem is needed.
Needs the ``ray`` extra.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reactloop.errors import MissingDependency
from reactloop.eval.backends import stalled_record
from reactloop.eval.episode import CancelScope, EpisodeSpec, run_episode
from reactloop.eval.throttle import EndpointGates

Record = dict[str, Any]


class _EpisodeActor:
    def __init__(self, caps: dict[str, int], default: int) -> None:
        self.scope = CancelScope()
        self.gates = EndpointGates(caps, default)
        self.folder = Path(tempfile.mkdtemp(prefix="reactloop-ray-"))

    def run(self, spec: EpisodeSpec) -> tuple[Record | None, bytes | None]:
        trace = self.folder / f"{spec.file_stem}.jsonl"
        try:
            record = run_episode(spec, trace, self.scope, self.gates)
            journal = trace.read_bytes() if trace.exists() else None
        finally:
            trace.unlink(missing_ok=True)
        return record, journal

    def cancel(self) -> None:
        self.scope.cancel()

    def endpoints(self) -> list[dict[str, Any]]:
        return self.gates.summaries()


class RayBackend:
    """``actors`` Ray actors sharing ``concurrency`` threads; Ray is started when not running.
    Each actor keeps its own endpoint gates, with its share of each endpoint's cap."""

    def __init__(
        self,
        concurrency: int,
        traces: Path,
        *,
        address: str | None = None,
        actors: int = 2,
        write: Callable[[Path, bytes], None],
        save: Callable[[EpisodeSpec, Record], None],
        caps: dict[str, int] | None = None,
    ) -> None:
        try:
            import ray
        except ModuleNotFoundError:
            raise MissingDependency(
                "--backend ray needs Ray: pip install 'reactloop[ray]'"
            ) from None
        self.ray: Any = ray
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        self.traces = traces
        self.write = write
        self.save = save
        actors = max(1, actors)
        threads = math.ceil(concurrency / actors)
        shares = {e: math.ceil(cap / actors) for e, cap in (caps or {}).items()}
        remote = self.ray.remote(num_cpus=0, max_concurrency=threads + 2)(_EpisodeActor)
        self.actors = [remote.remote(shares, threads) for _ in range(actors)]
        self._next = 0
        self._endpoints: list[dict[str, Any]] | None = None

    def submit(self, spec: EpisodeSpec) -> Any:
        actor = self.actors[self._next % len(self.actors)]
        self._next += 1
        return actor.run.remote(spec)

    def wait(self, handles: Sequence[Any], timeout: float) -> list[Any]:
        ready, rest = self.ray.wait(list(handles), num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready.extend(more)
        return list(ready)

    def outcome(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        try:
            record, journal = self.ray.get(handle)
        except self.ray.exceptions.RayError:  # cancelled, or the actor died: not recorded
            return None
        if record is not None:
            if journal is not None:
                self.write(self.traces / f"{spec.file_stem}.jsonl", journal)
            self.save(spec, record)
        return record  # type: ignore[no-any-return]

    def abandon(self, handle: Any, spec: EpisodeSpec) -> Record | None:
        """The actor's thread stays busy; the episode is recorded ``stalled`` and a late
        result from it is never collected."""
        record = stalled_record(spec, journal="incomplete: the actor never sent it back")
        self.save(spec, record)
        return record

    def cancel(self) -> None:
        for actor in self.actors:
            actor.cancel.remote()

    def endpoints(self) -> list[dict[str, Any]]:
        """Each actor's gates, the actor's number added to each endpoint's summary (kept by
        ``close``, so also after it)."""
        if self._endpoints is None:
            try:
                found = self.ray.get([actor.endpoints.remote() for actor in self.actors])
            except self.ray.exceptions.RayError:  # an actor died: its history with it
                found = []
            self._endpoints = [s | {"actor": n} for n, sums in enumerate(found) for s in sums]
        return self._endpoints

    def close(self) -> None:
        self.endpoints()
        for actor in self.actors:
            self.ray.kill(actor)
