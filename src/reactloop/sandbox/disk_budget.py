"""The disk budget of one command: how much free space its file systems lost since it began.

RLIMIT_FSIZE caps each file, not their sum, and quotas are not available everywhere; so the
harness watches the free space (``statvfs``) of every file system the command may write to
(the workspace's, the private temporary folder's, ``/dev/shm``'s) and stops the command once
the loss exceeds its budget. Free space counts what a walk of the workspace would miss:
files deleted while still open, hard links, writes outside the workspace in the weak mode.
Two limits of the method: the budget is checked every ``CHECK_SECONDS``, so a command may
overshoot by what it writes or reserves in that time (``fallocate`` takes a gigabyte in a
millisecond), and other processes writing to the same file systems meanwhile count against it
(the budget errs on the side of stopping). Against the first, no file may grow past the budget
(``rlimits``: RLIMIT_FSIZE, which binds ``fallocate`` too unless it keeps the size), and once
the budget stops a command ``sandbox.reclaim`` removes the files it created.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from reactloop.sandbox.reclaim import birth_floor

__all__ = ["CHECK_SECONDS", "DiskBudget"]

CHECK_SECONDS = 0.02
MIB = 1024 * 1024


class DiskBudget:
    """Free space of each distinct file system at the start, and the loss since then.

    Each file system is held by a descriptor of its folder, so renaming or removing the folder
    during the command changes nothing; ``close`` releases them.
    """

    def __init__(self, folders: Iterable[Path], budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._start: dict[int, tuple[int, int]] = {}  # st_dev -> (descriptor, free bytes)
        for folder in folders:
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            device = os.fstat(fd).st_dev
            if device in self._start:
                os.close(fd)
                continue
            self._start[device] = (fd, _free_bytes(fd))
        self.started_ns = birth_floor() if self._start else 0  # later births are the command's

    def used_bytes(self) -> int:
        """Free space lost since the start, summed over the file systems (never negative)."""
        return sum(max(start - _free_bytes(fd), 0) for fd, start in self._start.values())

    def overspent(self) -> str | None:
        """Why the command must stop, or None while it is within its budget."""
        used = self.used_bytes()
        if used <= self.budget_bytes:
            return None
        return (
            f"disk budget exceeded: the command took {used // MIB} MiB of disk, "
            f"its budget is {self.budget_bytes // MIB} MiB"
        )

    def close(self) -> None:
        for fd, _free in self._start.values():
            os.close(fd)
        self._start.clear()


def _free_bytes(fd: int) -> int:
    stats = os.fstatvfs(fd)
    return stats.f_bfree * stats.f_frsize
