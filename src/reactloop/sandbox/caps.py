"""Drop every Linux capability of this process for good (bounding and ambient sets too).

Used by the weak mode's supervisor right before it starts the command, so a command run by
root cannot mount, change ownership, trace other users' processes or load modules; after
``execve`` root gets only what the (now empty) bounding set allows. Standard library only.
"""

from __future__ import annotations

import ctypes
import os

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63


def drop_all_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets.

    Raises ``OSError`` when the sets cannot be emptied (dropping the bounding set needs
    CAP_SETPCAP, which a process without capabilities does not need anyway).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(version=CAPABILITY_VERSION_3, pid=0)
    current = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), current) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    if any(item.permitted for item in current):
        for cap in range(last_capability() + 1):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                errno = ctypes.get_errno()
                raise OSError(errno, f"cannot drop capability {cap}: {os.strerror(errno)}")
    empty = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), empty) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


PR_SET_DUMPABLE = 4


def hide_from_same_user() -> bool:
    """Make this process non-dumpable; True when it worked.

    A process of the same user without capabilities can then neither read this process's
    ``/proc/<pid>/environ`` (its API keys) nor ``mem``, nor attach to it with ptrace. Processes
    it starts are not affected: ``execve`` resets the flag. It also turns off core dumps.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
