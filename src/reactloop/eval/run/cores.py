"""How many worker processes an eval runs: the cores this process may use, and the rule.

``usable_cores`` is the CPU affinity (``os.sched_getaffinity``) cut to the CPU quota of the
cgroups the process is in, from its own cgroup up to the root of each hierarchy: cgroup v2's
``cpu.max`` (``QUOTA PERIOD``, or ``max``) and cgroup v1's ``cpu.cfs_quota_us`` over
``cpu.cfs_period_us`` (``-1``: none). Both are read, so that the answer is right on a pure
v2 machine (``/sys/fs/cgroup`` is the v2 hierarchy), on a hybrid one (v1 controllers in
``/sys/fs/cgroup/cpu``, or ``cpu,cpuacct``, and v2 in ``/sys/fs/cgroup/unified``) and in a
container (its cgroup path in ``/proc/self/cgroup`` may not exist under the mount: then the
mount's own root is the container's cgroup). A quota of 1.5 cores counts as 2 (rounded up, as
the JVM and Go do: a worker mostly waits on the network).

``worker_count`` is the rule for ``--workers auto``: one worker per usable core, but never
more than the eval can use: one per ``CONCURRENCY_PER_WORKER`` episodes in flight (one
process keeps that many busy on one core unless each model call takes under some 40 ms: at
2-3 ms of harness CPU a call, 16 episodes in flight at 50 ms a call are about one core), and
one per ``EPISODES_PER_WORKER`` episodes to run, so that a small eval stays in one process:
the forkserver that starts the workers costs about 1 s of CPU (once a process), more than a
worker's share of a small eval saves (256 two-call episodes are some 1.3 s of harness CPU;
docs/benchmarks.md).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
EPISODES_PER_WORKER = 256
"""Episodes to run for each worker process: fewer than twice this, and the eval stays in one
process."""
CONCURRENCY_PER_WORKER = 16
"""Episodes in flight for each worker process: a ``--concurrency`` under twice this, one
process."""


def usable_cores(root: Path | None = None, membership: Path | None = None) -> int:
    """The cores this process may keep busy: its affinity, cut to its cgroups' CPU quota
    (read under ``root``, default ``CGROUP_ROOT``; ``membership``: ``PROC_CGROUP``)."""
    cores = _affinity()
    quota = cgroup_quota(root, membership)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return cores


def worker_count(requested: int | None, *, episodes: int, concurrency: int, cores: int) -> int:
    """The worker processes to run ``episodes`` at ``concurrency``: ``requested`` when given
    (never more than the episodes or the concurrency), else the rule in the docstring."""
    most = max(1, min(episodes, concurrency))
    if requested is not None:
        return min(requested, most)
    usable = min(concurrency // CONCURRENCY_PER_WORKER, episodes // EPISODES_PER_WORKER)
    return max(1, min(cores, most, usable))


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def cgroup_quota(root: Path | None = None, membership: Path | None = None) -> float | None:
    """The tightest CPU quota, in cores, of this process's cgroups (v2 and v1); None when
    none is set or there are no cgroups to read."""
    root = CGROUP_ROOT if root is None else root
    paths = _memberships(PROC_CGROUP if membership is None else membership)
    quotas: list[float | None] = []
    v2 = _v2_mount(root)
    if v2 is not None and "" in paths:
        quotas += [_v2_quota(folder / "cpu.max") for folder in _up(v2, paths[""])]
    v1 = _v1_cpu_mount(root)
    if v1 is not None and "cpu" in paths:
        quotas += [_v1_quota(folder) for folder in _up(v1, paths["cpu"])]
    found = [q for q in quotas if q is not None]
    return min(found) if found else None


def _memberships(membership: Path) -> dict[str, str]:
    """Controller -> cgroup path, from ``/proc/self/cgroup`` (``ID:CONTROLLERS:PATH`` lines);
    the v2 hierarchy's line (``0::PATH``) under the key ""."""
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    paths: dict[str, str] = {}
    for line in lines:
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        for controller in controllers.split(",") if controllers else [""]:
            paths.setdefault(controller, path)
    return paths


def _v2_mount(root: Path) -> Path | None:
    for mount in (root, root / "unified"):
        if (mount / "cgroup.controllers").is_file():
            return mount
    return None


def _v1_cpu_mount(root: Path) -> Path | None:
    """The v1 hierarchy with the ``cpu`` controller: ``cpu``, ``cpu,cpuacct`` or the like."""
    try:
        folders = sorted(p for p in root.iterdir() if "cpu" in p.name.split(","))
    except OSError:
        return None
    return next((f for f in folders if (f / "cpu.cfs_quota_us").is_file()), None)


def _up(mount: Path, path: str) -> list[Path]:
    """The cgroup's folder under ``mount`` and each of its parents up to ``mount``: a quota
    set on a parent holds for every cgroup under it."""
    parts = [p for p in path.split("/") if p and p != ".."]
    return [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _v2_quota(path: Path) -> float | None:
    fields = _read(path).split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _ratio(fields[0], fields[1])


def _v1_quota(folder: Path) -> float | None:
    return _ratio(_read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us"))


def _ratio(quota: str, period: str) -> float | None:
    try:
        over, per = int(quota), int(period)
    except ValueError:
        return None
    return over / per if over > 0 and per > 0 else None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
