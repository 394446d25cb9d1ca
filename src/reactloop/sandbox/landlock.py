"""Landlock through ``ctypes``: forbid writes outside some folders, and TCP, for this process.

Landlock (Linux 5.13+) lets an unprivileged process restrict itself and every process it
starts afterwards; nothing can lift the restriction. We handle the write-like rights only, so
reading stays allowed everywhere, and writing is allowed beneath the given folders and to a
few device files (``/dev/null``, ``/dev/tty``...), no other device node. From ABI 4
TCP ``bind`` and ``connect`` are denied everywhere; from ABI 6 signals and abstract Unix
sockets cannot reach processes outside the sandbox. Landlock also denies ``ptrace`` access to
processes outside the domain, so ``/proc/<harness>/environ`` cannot be read.

Standard library only: the standalone supervisor script imports this module.
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_WRITE_V1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    try:
        version = int(_libc().syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def write_rights(abi: int) -> int:
    rights = _WRITE_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _ruleset_attr(abi: int, block_tcp: bool) -> tuple[_RulesetAttr, int]:
    attr = _RulesetAttr(handled_access_fs=write_rights(abi))
    size = 8
    if abi >= 4:
        size = 16
        if block_tcp:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    return attr, size


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"landlock {what}: {os.strerror(errno)}")
    return result


DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


def restrict_self(
    writable: list[str], *, devices: tuple[str, ...] = DEVICE_FILES, block_tcp: bool = True
) -> int:
    """Restrict this process (and its future children); returns the ABI version used.

    Writing is allowed beneath the ``writable`` folders and to the ``devices`` files (those
    that exist) and nowhere else: not to other device nodes, not to the host's ``/dev/shm``.
    Raises ``OSError`` when Landlock is unavailable or a rule cannot be added.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(38, "landlock is not supported by this kernel")
    libc = _libc()
    attr, size = _ruleset_attr(abi, block_tcp)
    ruleset = _check(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), size, 0), "ruleset")
    try:
        rights = write_rights(abi)
        for path in writable:
            _allow_beneath(libc, ruleset, path, rights)
        for device in devices:
            if os.path.exists(device):
                _allow_beneath(libc, ruleset, device, rights & (WRITE_FILE | TRUNCATE | IOCTL_DEV))
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(SYS_RESTRICT_SELF, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _allow_beneath(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)  # a folder, or a file for file rights only
    try:
        rule = _PathBeneathAttr(allowed_access=rights, parent_fd=fd)
        _check(libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0), path)
    finally:
        os.close(fd)
