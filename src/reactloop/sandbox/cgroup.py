"""A throwaway ``pids`` cgroup per command, when the harness may create one (usually as root).

RLIMIT_NPROC does not bind root, so for root a cgroup's ``pids.max`` is what contains a fork
bomb; it also lists every process the command started, however it detached, which makes the
final kill exact. cgroup v2 and the v1 ``pids`` hierarchy are both understood; on a hybrid
layout (v1 controllers with the v2 ``unified`` hierarchy beside them) the cgroup is made in the
hierarchy that carries the ``pids`` controller, since that is the one that limits and lists.

A cgroup is named ``reactloop-PID-START-N`` after the harness that made it (its process id and
start time, so a reused process id does not keep a dead harness's cgroup alive); the next
``create`` in the same place kills what is left in the cgroups of harnesses that are gone and
removes them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

_counter = itertools.count()


@dataclass(frozen=True)
class PidsCgroup:
    path: Path

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """A new cgroup with ``pids.max`` set, or None when none can be made here."""
        if os.geteuid() != 0:
            return None
        for base in _candidate_bases():
            _remove_stale(base)
            path = base / f"{_own_prefix()}-{next(_counter)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(max_pids))
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
                continue
            return cls(path)
        return None

    def pids(self) -> list[int]:
        """Members that are still alive (zombies wait for their parent and cannot be killed)."""
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split() if not _is_zombie(pid)]

    def kill(self) -> None:
        """SIGKILL every member until the cgroup is empty."""
        kill_file = self.path / "cgroup.kill"
        if kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
        for _ in range(500):
            members = self.pids()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self, wait_seconds: float = 2.0) -> None:
        """Kill what is left and remove the folder (members may take a moment to go)."""
        self.kill()
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)


def _remove_stale(base: Path) -> None:
    """Empty and remove the cgroups of harnesses that were killed before they could clean up."""
    try:
        entries = [entry for entry in base.glob("reactloop-*") if _owner_is_gone(entry.name)]
    except OSError:
        return
    for entry in entries:
        PidsCgroup(entry).remove(wait_seconds=0.5)


def _own_prefix() -> str:
    pid = os.getpid()
    return f"reactloop-{pid}-{_start_time(str(pid)) or 0}"


def _owner_is_gone(name: str) -> bool:
    """Whether the harness named in ``reactloop-PID[-START]-N`` is no longer running.

    Names without a start time come from older versions: there only the process id is known.
    """
    parts = name.split("-")
    if len(parts) not in (3, 4) or not all(part.isdigit() for part in parts[1:]):
        return False  # not one of ours
    started = _start_time(parts[1])
    if started is None:
        return True
    return len(parts) == 4 and started != int(parts[2])


def _start_time(pid: str) -> int | None:
    """A process's start time in clock ticks since boot (``/proc/PID/stat`` field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _candidate_bases() -> list[Path]:
    memberships = _memberships()
    bases: list[Path] = []
    for mount_point, root, fstype, options in _cgroup_mounts():
        if fstype == "cgroup2" and "" in memberships:
            relative = memberships[""]
        elif fstype == "cgroup" and "pids" in options.split(","):
            relative = memberships.get("pids", "/")
        else:
            continue
        if not relative.startswith(root):
            continue
        base = Path(mount_point) / relative[len(root) :].lstrip("/")
        if fstype == "cgroup2" and not _v2_delegates_pids(base):
            continue
        bases.append(base)
    return bases


def _v2_delegates_pids(base: Path) -> bool:
    try:
        return "pids" in (base / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def _memberships() -> dict[str, str]:
    """controller name ("" for cgroup v2) -> this process's cgroup path."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as handle:
        for line in handle:
            _id, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _cgroup_mounts() -> list[tuple[str, str, str, str]]:
    mounts = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                mounts.append((fields[4], fields[3], tail[0], tail[2]))
    return mounts


def _is_zombie(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True
