"""The weak mode's private mount namespace: a minimal ``/dev``, a fresh ``/proc``, and (root
without Landlock) the system's control files read-only.

``private_system`` runs in the command's process, inside its PID namespace, while it still has
the capabilities of its user namespace (root: the initial one), before Landlock and before the
capabilities are dropped; without ``CAP_SYS_ADMIN`` afterwards the command cannot undo any of it.

- ``/dev`` is a read-only tmpfs holding only the device nodes a command needs (``DEVICES``,
  bound from the host's, as bubblewrap's ``--dev`` does), the ``fd``/``stdin``/``stdout``/
  ``stderr`` links, and a private ``/dev/shm``: a tmpfs of ``shm_bytes``. Block devices,
  ``kmsg``, consoles and terminals, ``kvm``, ``fuse`` and the host's ``/dev/shm`` are absent;
  ``/dev/pts`` is a new instance (the command's own pseudo-terminals), where the kernel allows.
- ``/proc`` is mounted afresh for the command's PID namespace, so it lists the command's own
  processes only: not the harness's command line nor any other host process's. Where the
  kernel refuses (a ``/proc`` with parts masked, as in some containers) the host's stays.
- ``seal`` (root without Landlock): every cgroup mount, ``/proc/sys`` and
  ``/proc/sysrq-trigger`` read-only, so the command can neither leave its pids cgroup (and
  the fork-bomb cap) nor write kernel settings.

Standard library only.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
PROC_FILES = ("/proc/sys", "/proc/sysrq-trigger")
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
         "stderr": "/proc/self/fd/2"}  # fmt: skip


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


def private_system(shm_bytes: int, *, seal: bool) -> None:
    """Enter a private mount namespace with a minimal ``/dev`` and a fresh ``/proc`` (where
    the kernel allows one); ``OSError`` when the namespace or ``/dev`` cannot be made."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(CLONE_NEWNS), "cannot create a mount namespace")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "cannot make / private")
    _minimal_dev(libc, shm_bytes)
    libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)  # or the host's
    if seal:
        _seal(libc)


def _minimal_dev(libc: ctypes.CDLL, shm_bytes: int) -> None:
    nodes = {}
    for name in DEVICES:
        try:
            nodes[name] = os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
    try:
        flags = MS_NOSUID | MS_NOEXEC
        _check(libc.mount(b"tmpfs", b"/dev", b"tmpfs", flags, b"mode=755,size=64k"), "/dev")
        for name, fd in nodes.items():
            target = f"/dev/{name}".encode()
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o666))
            source = f"/proc/self/fd/{fd}".encode()
            _check(libc.mount(source, target, None, MS_BIND, None), f"cannot bind /dev/{name}")
        for name, points_to in LINKS.items():
            os.symlink(points_to, f"/dev/{name}")
        _private_pts(libc)
        os.mkdir("/dev/shm")
        size = f"mode=1777,size={max(shm_bytes, 4096)}".encode()
        _check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", flags | MS_NODEV, size), "/dev/shm")
        _read_only(libc, b"/dev", flags)
    finally:
        for fd in nodes.values():
            os.close(fd)


def _private_pts(libc: ctypes.CDLL) -> None:
    """A new ``devpts`` instance, as bubblewrap's ``--dev`` has: pseudo-terminals of the
    command's own (``pty.openpty``, ``script``), none of the host's. Skipped if refused."""
    os.mkdir("/dev/pts")
    options = b"newinstance,ptmxmode=0666,mode=620"
    if libc.mount(b"devpts", b"/dev/pts", b"devpts", MS_NOSUID | MS_NOEXEC, options) == 0:
        os.symlink("pts/ptmx", "/dev/ptmx")


def _seal(libc: ctypes.CDLL) -> None:
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
