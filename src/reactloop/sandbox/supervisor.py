"""The weak mode's supervisor: a small process between the harness and the command.

It runs as ``python -I -S supervisor.py OPTIONS -- PROGRAM ARGS...`` (see ``parse_args``;
standard library only, so it starts without importing reactloop). It makes itself a child
subreaper, so every process the command starts — including double-forked and ``setsid``
children — stays its descendant. With ``--pidns`` the command also runs in a PID namespace
of its own (see ``pidns``), where it cannot reach the supervisor, and whose processes the
kernel kills when the command ends; with ``--private-dev`` it gets a mount namespace with a
minimal ``/dev`` (a private ``/dev/shm`` of that size) and its own ``/proc``, and with
``--seal`` (root without Landlock) also the cgroup files and ``/proc/sys`` read-only (see
``mounts``). It forks the command with rlimits,
Landlock and no capabilities, waits for it, then kills whatever the command left behind and
exits the way the command did. SIGTERM (sent by the harness on a timeout, or by the kernel
when the harness dies) kills the whole tree first.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

TYPE_CHECKING = False  # typing (and the re module it imports) would cost milliseconds here
if TYPE_CHECKING:
    from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_KILL_PASSES = 500
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    """Raised by the signal handler to leave the wait loop."""


def _on_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def descendants(root: int) -> set[int]:
    """Living (non-zombie) descendants of ``root``, found through the ppid chains in /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
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


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree() -> None:
    """SIGKILL every descendant until none is left (orphans come back to us: subreaper)."""
    me = os.getpid()
    for _ in range(MAX_KILL_PASSES):
        alive = descendants(me)
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # gone already
                continue
        _reap()
    _reap()


def parse_args(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """``--parent PID [--cgroup DIR] [--landlock] [--pidns] [--private-dev SHM_BYTES] [--seal]
    [--writable DIR]... [--rlimit NAME=N]... -- PROGRAM ARGS...`` (parsed by hand: argparse
    costs milliseconds)."""
    config: dict[str, Any] = {
        "writable": [],
        "rlimits": [],
        "landlock": False,
        "pidns": False,
        "seal": False,
        "cgroup": None,
        "remove_after": None,
        "private_dev": None,
    }
    index = 1
    while argv[index] != "--":
        flag = argv[index]
        if flag in ("--landlock", "--pidns", "--seal"):
            config[flag[2:]] = True
            index += 1
            continue
        value = argv[index + 1]
        if flag == "--parent":
            config["parent"] = int(value)
        elif flag == "--cgroup":
            config["cgroup"] = value
        elif flag == "--remove-after":
            config["remove_after"] = value
        elif flag == "--private-dev":
            config["private_dev"] = int(value)
        elif flag == "--writable":
            config["writable"].append(value)
        elif flag == "--rlimit":
            name, _, number = value.partition("=")
            config["rlimits"].append((name, int(number)))
        else:
            raise SystemExit(f"reactloop supervisor: unknown option {flag}")
        index += 2
    return config, argv[index + 1 :]


def remove_tree(path: str) -> None:
    """Delete the command's private TMPDIR (the harness may be gone and cannot)."""
    for folder, dirs, files in os.walk(path, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                continue
        for name in dirs:
            try:
                os.rmdir(os.path.join(folder, name))
            except OSError:  # a symlink to a folder
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    continue
    try:
        os.rmdir(path)
    except OSError:
        return


def _apply_rlimits(rlimits: list[tuple[str, int]]) -> None:
    import resource

    for name, value in rlimits:
        which = getattr(resource, f"RLIMIT_{name}")
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


def _exec_command(config: dict[str, Any], program: list[str]) -> NoReturn:
    try:
        for signum in (signal.SIGPIPE, signal.SIGXFSZ, *_STOP_SIGNALS):
            signal.signal(signum, signal.SIG_DFL)
        _apply_rlimits(config["rlimits"])
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the stdlib
        writable, devices = list(config["writable"]), []
        if config["seal"] and config["private_dev"] is None:
            raise OSError("--seal needs the mount namespace of --private-dev")
        if config["private_dev"] is not None:
            import mounts

            mounts.private_system(config["private_dev"], seal=config["seal"])
            writable.append("/dev/shm")  # the private one
            devices = ["/dev/pts"] if os.path.exists("/dev/pts/ptmx") else []  # its own too
        if config["landlock"]:
            import landlock

            landlock.restrict_self(writable, devices=(*landlock.DEVICE_FILES, *devices))
        import caps

        caps.drop_all_capabilities()
        os.execvp(program[0], program)
    except BaseException as exc:  # anything here means the command must not run
        os.write(2, f"reactloop sandbox: cannot start the command: {exc}\n".encode())
    os._exit(126)


def _exit_like(status: int) -> NoReturn:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status))


def _join_cgroup(path: str) -> None:
    with open(os.path.join(path, "cgroup.procs"), "w") as handle:
        handle.write(str(os.getpid()))


def _wait_for(pid: int) -> int:
    while True:
        got, status = os.waitpid(-1, 0)
        if got == pid:
            return status


def main(argv: list[str]) -> NoReturn:
    config, program = parse_args(argv)
    if config["cgroup"]:
        _join_cgroup(config["cgroup"])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for signum in _STOP_SIGNALS:
        signal.signal(signum, _on_stop)
    if os.getppid() != config["parent"]:  # the harness died before PDEATHSIG was armed
        os._exit(125)
    try:
        if config["pidns"]:
            _enter_pid_namespace()
        child = os.fork()
        if child == 0:
            _start_child(config, program)
        status = _wait_for(child)
    except _Stop:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        _clean_up(config)
        os._exit(128 + signal.SIGTERM)
    for signum in _STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    _clean_up(config)
    _exit_like(status)


def _enter_pid_namespace() -> None:
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    import pidns

    try:
        pidns.unshare_pid_namespace()
    except OSError as exc:
        os.write(2, f"reactloop sandbox: {exc}\n".encode())
        os._exit(125)


def _start_child(config: dict[str, Any], program: list[str]) -> NoReturn:
    if not config["pidns"]:
        _exec_command(config, program)
    try:
        import pidns

        pidns.run_as_init(lambda: _exec_command(config, program))
    except BaseException as exc:  # never return into the supervisor's code in the child
        os.write(2, f"reactloop sandbox: cannot start process 1: {exc}\n".encode())
    os._exit(126)


def _clean_up(config: dict[str, Any]) -> None:
    kill_tree()
    if config["remove_after"]:
        remove_tree(config["remove_after"])


if __name__ == "__main__":
    main(sys.argv)
