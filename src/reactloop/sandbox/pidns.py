"""A PID namespace for the weak mode's command, so that nothing it starts can outlive it.

The supervisor calls ``unshare_pid_namespace`` and forks: the child is process 1 of a new PID
namespace and runs ``run_as_init``, which forks the command and waits for it. Inside the
namespace the supervisor has no process id at all, so the command cannot signal, trace or
kill it (``$PPID`` is 0); process 1 ignores every signal sent from inside; and when process 1
exits the kernel kills everything left in the namespace — whatever session, process group or
cgroup it moved to. Root uses a plain PID namespace; other users a user namespace that maps
their own uid and gid only (their files keep their owner; other users' files show as owned by
``nobody``). Standard library only.
"""

from __future__ import annotations

import ctypes
import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1


def unshare_pid_namespace() -> None:
    """Make this process's next child process 1 of a new PID namespace; ``OSError`` if not."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0 and libc.unshare(CLONE_NEWPID) == 0:
        return
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot create a PID namespace: {os.strerror(errno)}")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def run_as_init(start: Callable[[], NoReturn]) -> NoReturn:
    """As process 1: fork ``start`` (the command), reap orphans, exit the way it did."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    command = os.fork()
    if command == 0:
        start()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(125)
        if pid == command:
            # Process 1 cannot kill itself with a signal; 128+N is how the shell says it.
            if os.WIFSIGNALED(status):
                os._exit(128 + os.WTERMSIG(status))
            os._exit(os.waitstatus_to_exitcode(status))
