"""A throwaway ``pids`` cgroup per command, when the harness may create one (usually as root).

RLIMIT_NPROC does not bind root, so for root a cgroup's ``pids.max`` is what contains a fork
bomb; it also lists every process the command started, however it detached, which makes the
final kill exact. cgroup v2 and the v1 ``pids`` hierarchy are both understood.
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
            path = base / f"reactloop-{os.getpid()}-{next(_counter)}"
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

    def remove(self) -> None:
        """Kill what is left and remove the folder (members may take a moment to go)."""
        self.kill()
        deadline = time.monotonic() + 2.0
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
    """Remove empty cgroups left by harnesses that were killed before they could clean up."""
    try:
        entries = list(base.glob("reactloop-*-*"))
    except OSError:
        return
    for entry in entries:
        owner = entry.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                entry.rmdir()  # fails while processes remain in it: then it is not stale


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
