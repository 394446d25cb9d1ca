"""For a root command in the plain weak mode: a private mount namespace with the system's
control files read-only.

Without Landlock, a root command without capabilities may still write files that root owns:
``cgroup.procs`` (and so leave its pids cgroup, and with it the fork-bomb cap) and
``/proc/sys``. ``seal_system`` gives the command a mount namespace of its own in which every
cgroup mount, ``/proc/sys`` and ``/proc/sysrq-trigger`` are bound read-only; without
``CAP_SYS_ADMIN`` (dropped right after) the command cannot undo it. Standard library only.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
PROC_FILES = ("/proc/sys", "/proc/sysrq-trigger")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def cgroup_mounts() -> list[tuple[str, int]]:
    """``(mount point, per-mount flags)`` of every cgroup file system mounted here."""
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) >= 6 and tail and tail[0] in ("cgroup", "cgroup2"):
                options = fields[5].split(",")
                flags = sum(flag for name, flag in _KEPT_FLAGS.items() if name in options)
                point = fields[4].replace("\\040", " ")
                found.append((point, flags))
    return found


def seal_system() -> None:
    """Enter a private mount namespace with cgroups and ``/proc/sys`` read-only, or raise."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(CLONE_NEWNS), "cannot create a mount namespace")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "cannot make / private")
    for path in PROC_FILES:
        if os.path.exists(path):
            target = path.encode()
            _check(libc.mount(target, target, None, MS_BIND, None), f"cannot bind {path}")
            _read_only(libc, target, MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for point, flags in cgroup_mounts():
        _read_only(libc, point.encode(), flags)


def _read_only(libc: ctypes.CDLL, target: bytes, flags: int) -> None:
    what = f"cannot make {target.decode()} read-only"
    _check(libc.mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, None), what)
