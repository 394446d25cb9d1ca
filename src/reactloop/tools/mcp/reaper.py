"""The process between the harness and a stdio MCP server: nothing the server starts outlives it.

The SDK starts a stdio server in a session of its own and, to stop it, closes its stdin and
then signals its process group; a child the server moved to a session of its own (``setsid``,
a daemon's double fork) is in neither and survived the client. So the client starts
``python -I -S reaper.py --parent PID -- COMMAND ARGS...`` (``reaper_argv``) instead of the
server itself. The reaper makes itself a child subreaper, so every process the server starts
stays its descendant whatever session it moves to; forks and execs the server on the same
stdin, stdout and stderr; and when the server exits, when it is signalled (SIGTERM: the SDK's
escalation, or the kernel's when the harness dies, PDEATHSIG) it SIGKILLs every descendant
left, then exits the way the server did.

MCP servers are configured by the user, not hostile: a descendant that kills the reaper first
(same user) escapes it. Linux only; standard library only (run as a script).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_KILL_PASSES = 500
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
REAPER = os.path.abspath(__file__)


def reaper_argv(command: str, args: list[str]) -> list[str]:
    """The command line that runs ``command`` under a reaper of this process."""
    return [sys.executable, "-I", "-S", REAPER, "--parent", str(os.getpid()), "--", command, *args]


class _Stop(Exception):
    pass


def _on_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def descendants(root: int) -> set[int]:
    """Living descendants of ``root``, through the parent links in ``/proc``."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != b"Z":
                children.setdefault(int(fields[1]), []).append(int(name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant until none is left (orphans come back to us: subreaper)."""
    for _ in range(MAX_KILL_PASSES):
        alive = descendants(os.getpid())
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        _reap()
    _reap()


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait_for(pid: int) -> int:
    while True:
        got, status = os.waitpid(-1, 0)
        if got == pid:
            return status


def _exit_like(status: int) -> NoReturn:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + 9)


def _start(program: list[str]) -> int:
    child = os.fork()
    if child == 0:
        try:
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_DFL)
            os.execvp(program[0], program)
        except BaseException as exc:
            os.write(2, f"reactloop: cannot start the MCP server {program[0]!r}: {exc}\n".encode())
        os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)  # the pipes are the server's: EOF when it is gone
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return child


def main(argv: list[str]) -> NoReturn:
    if len(argv) < 5 or argv[1] != "--parent" or argv[3] != "--":
        raise SystemExit("usage: reaper.py --parent PID -- COMMAND ARGS...")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_stop)
    if os.getppid() != int(argv[2]):  # the harness died before PDEATHSIG was armed
        os._exit(125)
    status = (128 + signal.SIGTERM) << 8  # as if the server had exited 143
    with contextlib.suppress(_Stop):
        status = _wait_for(_start(argv[4:]))
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    kill_descendants()
    _exit_like(status)


if __name__ == "__main__":
    main(sys.argv)
