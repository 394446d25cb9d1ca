"""Episodes as calls to Ray actors: on a local Ray, or an existing cluster (``--ray-address``).

Each actor is a threaded Ray actor running ``run_episode`` as the local backend does; it writes
the episode's journal to its own temporary folder and returns it with the record, so the
driver writes every result and journal into DIR itself and no shared filesystem is needed (a
task's workspace folder is sent to the actors: ``ray_workspaces.py``; the journals of the
episodes in flight come back as they grow, and ``--resume`` sends an interrupted one to the
actor that continues it: ``ray_journals.py``). The actors are placed
round-robin on the cluster's nodes with CPUs (one per node by default, at least two), each
record names the node it ran on (``ray_node``), and each episode goes to the actor with the
fewest in flight. The variables that carry the rungs' API keys and base URLs are sent from
the driver to the actors. An actor whose node dies is restarted by Ray on another node and
runs the episodes it had in flight again (up to ``TASK_RETRIES`` times; after that, or when
Ray fails otherwise, the episode is recorded ``errored``, ``reason: actor_died`` or
``ray_error``, and ``--resume`` runs it again). Needs the ``ray`` extra.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import reactloop
from reactloop.errors import MissingDependency, UsageError
from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.run.backends import stalled_record
from reactloop.eval.run.episode import base_record
from reactloop.eval.run.ray_actor import EpisodeActor
from reactloop.eval.run.ray_journals import (
    DriverJournals,
)
from reactloop.eval.run.ray_workspaces import PackedWorkspaces
from reactloop.eval.run.spec import EpisodeSpec, Rung
from reactloop.models.roster import ROSTER

TASK_RETRIES = 2  # an episode whose actor died is run again, on its restarted actor
ACTOR_CPUS = 0.01
"""What each actor reserves: its threads wait on the network. Not 0: Ray ignores a soft node
affinity for an actor that needs no resources (both actors landed on one node)."""
ACTOR_START_SECONDS = 180.0  # for every actor to start (a cold node imports Ray and the SDKs)


def forwarded_env(rungs: Iterable[Rung], environ: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's variables the rungs' models read on the workers: each rung's
    ``api_key_env``, and its provider's key and base-URL variables (only those set)."""
    environ = dict(os.environ) if environ is None else environ
    names: set[str] = set()
    for rung in rungs:
        if rung.api_key_env:
            names.add(rung.api_key_env)
        for part in rung.spec.lower().split(":"):
            provider = ROSTER.get(part.strip())
            if provider is not None:
                names.update(n for n in (provider.key_env, provider.base_url_env) if n)
                if provider.ollama_host:
                    names.add("OLLAMA_HOST")
    return {name: environ[name] for name in sorted(names) if name in environ}


def _import_ray() -> Any:
    try:
        import ray
    except ModuleNotFoundError:
        raise MissingDependency("--backend ray needs Ray: pip install 'reactloop[ray]'") from None
    return ray


def worker_nodes(nodes: Iterable[dict[str, Any]]) -> list[str]:
    """The ids of the alive nodes (``ray.nodes()``) with CPUs (a head started with
    ``--num-cpus 0`` is kept free of episodes), or of every alive node when none has any."""
    alive = [node for node in nodes if node.get("Alive")]
    with_cpus = [node for node in alive if node.get("Resources", {}).get("CPU", 0) > 0]
    return [node["NodeID"] for node in with_cpus or alive]


def _connect(ray: Any, address: str | None) -> None:
    """Ray started here (no address), or the cluster at ``address``; a clear error when it
    cannot be reached (Ray itself retries an unanswered address for a minute or more)."""
    started = {} if address else {"include_dashboard": False}
    try:
        ray.init(address=address, log_to_driver=False, **started)
    except (ValueError, ConnectionError, RuntimeError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise UsageError(f"cannot connect to {where}: {exc}") from None


def _on(node: str) -> Any:
    """Placed on ``node``, or anywhere when it is gone (so that Ray restarts an actor whose
    node died on another one)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=node, soft=True)


class RayBackend:
    """``actors`` Ray actors (None: one per node, at least two) sharing ``concurrency``
    threads; Ray is started when not running. Each actor keeps its own endpoint gates, with
    its share of each endpoint's cap."""

    def __init__(
        self,
        concurrency: int,
        traces: Path,
        *,
        address: str | None = None,
        actors: int | None = None,
        write: Callable[[Path, bytes], None],
        save: Callable[[EpisodeSpec, EpisodeRecord], None],
        caps: dict[str, int] | None = None,
        rungs: Sequence[Rung] = (),
        fsync: bool = True,
    ) -> None:
        ray = self.ray = _import_ray()
        if not ray.is_initialized():
            _connect(ray, address)
        self.save = save
        nodes = worker_nodes(ray.nodes())
        count = max(1, actors or max(2, len(nodes)))
        threads = math.ceil(concurrency / count)
        shares = {e: math.ceil(cap / count) for e, cap in (caps or {}).items()}
        remote = ray.remote(
            num_cpus=ACTOR_CPUS,
            max_concurrency=threads + 2,
            max_restarts=-1,
            max_task_retries=TASK_RETRIES,
        )
        env = forwarded_env(rungs)
        actor_class = remote(EpisodeActor)
        runtime_env = {"env_vars": env} if env else None
        self.actors = [
            actor_class.options(
                scheduling_strategy=_on(nodes[n % len(nodes)]), runtime_env=runtime_env
            ).remote(shares, threads)
            for n in range(count)
        ]
        self.nodes = self._ready()
        self.load = [0] * count
        self._where: dict[Any, int] = {}
        self._stems: dict[Any, str] = {}  # each handle's episode
        self.journals = DriverJournals(traces, write, fsync=fsync)
        self.workspaces = PackedWorkspaces(ray)
        self._endpoints: list[dict[str, Any]] | None = None

    def _ready(self) -> list[str]:
        """Each actor's node, once every actor has started with this reactloop version."""
        exceptions = self.ray.exceptions
        needs = (
            f"every node needs Python {sys.version.split()[0]}, Ray {self.ray.__version__} "
            f"and reactloop {reactloop.__version__} (pip install 'reactloop[ray]')"
        )
        try:
            found = self.ray.get(
                [actor.ready.remote() for actor in self.actors], timeout=ACTOR_START_SECONDS
            )
        except exceptions.GetTimeoutError:
            self._kill()
            raise UsageError(
                f"the Ray actors did not start within {ACTOR_START_SECONDS:g} s; {needs}"
            ) from None
        except exceptions.RayError as exc:
            self._kill()
            # the last line of Ray's message is the cause ("ModuleNotFoundError: ...")
            cause = (str(exc).strip().splitlines() or [type(exc).__name__])[-1].strip()
            raise UsageError(f"the Ray actors could not start ({cause}); {needs}") from None
        versions = sorted({version for version, _ in found} - {reactloop.__version__})
        if versions:
            self._kill()
            raise UsageError(f"Ray workers run reactloop {', '.join(versions)}; {needs}")
        return [node for _, node in found]

    def submit(self, spec: EpisodeSpec) -> Any:
        number = min(range(len(self.actors)), key=self.load.__getitem__)
        journal = self.journals.to_send(spec.file_stem, spec.continue_journal)
        handle = self.actors[number].run.remote(spec, self.workspaces.ref(spec), journal)
        self.load[number] += 1
        self._where[handle] = number
        self._stems[handle] = spec.file_stem
        return handle

    def wait(self, timeout: float) -> list[Any]:
        running = {self._stems[h]: self._where[h] for h in self._stems}
        self.journals.poll(self.ray, self.actors, running)
        if not running:
            return []
        ready, rest = self.ray.wait(list(self._stems), num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
            ready.extend(more)
        return list(ready)

    def outcome(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        number = self._where.pop(handle)
        self._stems.pop(handle)
        self.load[number] -= 1
        try:
            record, ended = self.ray.get(handle)
        except self.ray.exceptions.RayError as exc:
            record, ended = self._lost(spec, number, exc), None
        record = self.journals.finish(spec.file_stem, record, ended)
        if record is not None:
            self.nodes[number] = record.ray_node or self.nodes[number]
            self.save(spec, record)
        return record

    def _lost(self, spec: EpisodeSpec, number: int, exc: Exception) -> EpisodeRecord:
        """The episode's actor died (its node with it, most often) or could not run it."""
        died = isinstance(exc, self.ray.exceptions.RayActorError)
        node = self.nodes[number]
        return dataclasses.replace(
            base_record(spec, time.time()),
            status="errored",
            reason="actor_died" if died else "ray_error",
            error=f"Ray actor {number} on node {node[:12]} lost the episode: {type(exc).__name__}",
            journal="as far as it came back from the actor",
            ray_node=node,
        )

    def abandon(self, handle: Any, spec: EpisodeSpec) -> EpisodeRecord | None:
        """The actor's thread stays busy (so it stays counted in the actor's load); the
        episode is recorded ``stalled`` and a late result from it is never collected."""
        self._where.pop(handle, None)
        self._stems.pop(handle, None)
        self.journals.forget(spec.file_stem)
        record = stalled_record(spec, journal="incomplete: as far as it came back from the actor")
        self.save(spec, record)
        return record

    def cancel(self) -> None:
        for actor in self.actors:
            actor.cancel.remote()

    def endpoints(self) -> list[dict[str, Any]]:
        """Each actor's gates, the actor's number and node added to each endpoint's summary
        (kept by ``close``, so also after it)."""
        if self._endpoints is None:
            try:
                found = self.ray.get(
                    [actor.endpoints.remote() for actor in self.actors], timeout=30
                )
            except self.ray.exceptions.RayError:  # an actor died, or no answer in 30 s
                found = []
            self._endpoints = [
                s | {"actor": n, "node": self.nodes[n]}
                for n, sums in enumerate(found)
                for s in sums
            ]
        return self._endpoints

    def close(self) -> None:
        self.endpoints()
        # each actor's temporary folder (a lost actor's went with its node, or stays in /tmp)
        with contextlib.suppress(self.ray.exceptions.RayError):
            self.ray.get([actor.cleanup.remote() for actor in self.actors], timeout=30)
        self._kill()

    def _kill(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
