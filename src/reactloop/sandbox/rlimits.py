"""Resource limits for one sandboxed command: as rlimit pairs, ``prlimit`` options or ``ulimit``.

Two caps are not rlimits: ``disk_bytes`` is watched by ``sandbox.budget`` and ``tmp_bytes``
sizes the bwrap sandbox's RAM-backed ``/tmp`` and ``/dev/shm``.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import asdict, dataclass
from typing import Any

MIB = 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ResourceLimits:
    """Caps for one command and everything it starts.

    ``cpu_seconds`` is CPU time per process (SIGXCPU, then SIGKILL); ``memory_bytes`` is the
    address space per process; ``file_size_bytes`` caps any file a process writes (and is
    never more than ``disk_bytes``);
    ``open_files`` caps descriptors per process; ``processes`` caps how many processes the
    command may have at once (a fork bomb hits it). ``disk_bytes`` caps the disk space the
    command may take in all (watched: it is stopped once over); ``tmp_bytes`` is the size of
    each of bwrap's RAM-backed ``/tmp`` and ``/dev/shm`` (writes past it fail with ENOSPC).
    """

    cpu_seconds: int = 120
    memory_bytes: int = 4096 * MIB
    file_size_bytes: int = 1024 * MIB
    open_files: int = 1024
    processes: int = 512
    disk_bytes: int = 4096 * MIB
    tmp_bytes: int = 512 * MIB

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResourceLimits:
        return cls(**{key: int(data[key]) for key in cls.__dataclass_fields__ if key in data})


def file_cap(limits: ResourceLimits) -> int:
    """RLIMIT_FSIZE: no file may outgrow the disk budget either (it binds ``fallocate``)."""
    return min(limits.file_size_bytes, limits.disk_bytes)


def rlimits(limits: ResourceLimits, *, nproc: int | None) -> list[tuple[str, int]]:
    """``(NAME, value)`` for each ``RLIMIT_NAME`` to set; ``nproc`` None leaves NPROC alone."""
    values = [
        ("CPU", limits.cpu_seconds),
        ("AS", limits.memory_bytes),
        ("FSIZE", file_cap(limits)),
        ("NOFILE", limits.open_files),
        ("CORE", 0),
    ]
    return values if nproc is None else [*values, ("NPROC", nproc)]


def ulimit_prelude(limits: ResourceLimits) -> str:
    """Shell text that sets the same limits as hard limits (for use inside a sandbox)."""
    flags = {
        "-t": limits.cpu_seconds,
        "-v": limits.memory_bytes // 1024,
        "-f": file_cap(limits) // 1024,
        "-n": limits.open_files,
        "-u": limits.processes,
        "-c": 0,
    }
    parts = [f"ulimit -S -H {flag} {shlex.quote(str(value))}" for flag, value in flags.items()]
    return " && ".join(parts)


def prlimit_argv(limits: ResourceLimits, *, nproc: int | None, executable: str) -> list[str]:
    """util-linux ``prlimit`` and its options, to put in front of a command line."""
    options = [f"--{name.lower()}={value}:{value}" for name, value in rlimits(limits, nproc=nproc)]
    return [executable, *options, "--"]


def processes_of_user(uid: int | None = None) -> int:
    """How many processes the user owns now (RLIMIT_NPROC counts them all)."""
    uid = os.getuid() if uid is None else uid
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count
