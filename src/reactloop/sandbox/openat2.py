"""``openat2(2)`` through ``ctypes``, resolving beneath a folder descriptor.

``RESOLVE_BENEATH`` makes the kernel fail (``EXDEV``) rather than leave the starting folder,
through ``..``, an absolute path or a symlink; ``RESOLVE_NO_MAGICLINKS`` refuses ``/proc``
magic links. Linux 5.6+; the syscall number is 437 on x86_64 and aarch64.
"""

from __future__ import annotations

import errno
import os
import platform
from functools import lru_cache
from typing import Any

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
_OPENAT2_SYSCALL = {"x86_64": 437, "amd64": 437, "aarch64": 437, "arm64": 437}


@lru_cache(maxsize=1)
def _openat2_syscall() -> tuple[Any, Any, int] | None:
    number = _OPENAT2_SYSCALL.get(platform.machine().lower())
    if number is None or not hasattr(os, "O_PATH"):
        return None
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = (
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        )

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc, OpenHow, number


def openat2(dir_fd: int, relpath: str, flags: int, mode: int = 0) -> int:
    """``openat2(dir_fd, relpath, how)`` with ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS``."""
    found = _openat2_syscall()
    if found is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
    import ctypes

    libc, open_how, number = found
    how = open_how(flags | os.O_CLOEXEC, mode, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    fd = libc.syscall(
        ctypes.c_long(number),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(relpath)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), relpath)
    return int(fd)


@lru_cache(maxsize=1)
def openat2_available() -> bool:
    """Whether this kernel (and its seccomp policy) lets us call ``openat2``."""
    try:
        os.close(openat2(-100, ".", os.O_PATH))  # AT_FDCWD
    except OSError:
        return False
    return True
