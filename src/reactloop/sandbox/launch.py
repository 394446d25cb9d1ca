"""Starting a sandboxed command, and stopping it with everything it started.

``launched`` starts bwrap (strong mode) or the supervisor (weak mode) with the output on a
pipe and a pidfd to watch it; leaving the ``with`` block kills whatever is still running and
removes the temporary cgroup and folders.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reactloop.sandbox.bwrap import (
    PrivateDirs,
    bwrap_argv,
    bwrap_path,
    bwrap_supports_size,
    interpreter_binds,
)
from reactloop.sandbox.caps import hide_from_same_user
from reactloop.sandbox.cgroup import PidsCgroup
from reactloop.sandbox.disk_budget import DiskBudget
from reactloop.sandbox.rlimits import ResourceLimits, prlimit_argv, processes_of_user, rlimits

SUPERVISOR = Path(__file__).with_name("supervisor.py")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SUPERVISOR_GRACE_SECONDS = 5.0


@dataclass(frozen=True, kw_only=True)
class Setup:
    """How to start one command: where, in which sandbox, with which caps."""

    workspace: Path
    sandbox: str
    limits: ResourceLimits
    read_only: bool
    pid_namespace: bool = False
    private_mounts: bool = False


@dataclass(frozen=True, kw_only=True)
class Launch:
    """A started command: its process (bwrap or the supervisor), output pipe and pidfd.

    ``budget`` took the free space of the file systems the command may fill before it began.
    """

    process: subprocess.Popen[bytes]
    read_fd: int
    pidfd: int
    sandbox: str
    cgroup: PidsCgroup | None
    budget: DiskBudget


def minimal_env(workspace: Path, tmpdir: str) -> dict[str, str]:
    """The whole environment a command sees: nothing of the harness's (no API keys)."""
    interpreter_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{interpreter_bin}:{SYSTEM_PATH}",
        "HOME": str(workspace),
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


@contextlib.contextmanager
def launched(command: str, setup: Setup) -> Iterator[Launch]:
    read_fd, write_fd = os.pipe()
    cgroup = PidsCgroup.create(setup.limits.processes)
    temp_dirs: list[Path] = []
    budget = DiskBudget((), 0)
    try:
        if setup.sandbox == "bwrap":
            private = None if bwrap_supports_size() else _private_dirs(temp_dirs)
            argv, env = _bwrap_launch(command, setup, cgroup, private)
        else:
            temp_dirs.append(Path(tempfile.mkdtemp(prefix="reactloop-tmp-")))
            argv, env = _weak_launch(command, setup, cgroup, temp_dirs[0])
        budget = DiskBudget(_watched(setup, temp_dirs), setup.limits.disk_bytes)
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=setup.workspace,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        budget.close()
        _cleanup(cgroup, temp_dirs)
        raise
    os.close(write_fd)
    launch = Launch(
        process=process,
        read_fd=read_fd,
        pidfd=os.pidfd_open(process.pid),
        sandbox=setup.sandbox,
        cgroup=cgroup,
        budget=budget,
    )
    try:
        yield launch
    finally:
        if process.returncode is None:
            kill(launch)
        os.close(launch.pidfd)
        os.close(read_fd)
        budget.close()
        _cleanup(cgroup, temp_dirs)


def _private_dirs(temp_dirs: list[Path]) -> PrivateDirs:
    """Folders on disk for /tmp and /dev/shm, for a bwrap that cannot size a tmpfs."""
    temp_dirs.append(Path(tempfile.mkdtemp(prefix="reactloop-tmp-")))
    private = PrivateDirs(tmp=temp_dirs[-1] / "tmp", shm=temp_dirs[-1] / "shm")
    private.tmp.mkdir()
    private.shm.mkdir()
    return private


def _watched(setup: Setup, temp_dirs: list[Path]) -> tuple[Path, ...]:
    """The workspace and the private folders (``/dev/shm`` is a private sized tmpfs, or, in
    the weak mode without a mount namespace, not writable)."""
    return (setup.workspace, *temp_dirs)


def _bwrap_launch(
    command: str, setup: Setup, cgroup: PidsCgroup | None, private: PrivateDirs | None
) -> tuple[list[str], dict[str, str]]:
    env = minimal_env(setup.workspace, "/tmp")
    prlimit = shutil.which("prlimit")
    argv = bwrap_argv(
        command,
        workspace=setup.workspace,
        env=env,
        limits_inside=None if prlimit else setup.limits,
        executable=bwrap_path() or "bwrap",
        read_only_workspace=setup.read_only,
        tmp_bytes=setup.limits.tmp_bytes,
        private_dirs=private,
        read_only_paths=interpreter_binds(),
    )
    if prlimit:  # limits set on bwrap itself are inherited inside and cannot be raised there
        argv = [*prlimit_argv(setup.limits, nproc=_nproc(setup.limits), executable=prlimit), *argv]
    if cgroup is not None:  # join before bwrap starts, so nothing escapes pids.max
        join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
        argv = ["/bin/sh", "-c", join, str(cgroup.path), *argv]
    return argv, env


def _weak_launch(
    command: str, setup: Setup, cgroup: PidsCgroup | None, tmpdir: Path
) -> tuple[list[str], dict[str, str]]:
    hide_from_same_user()  # without a PID namespace, the command could read our environment
    writable = [tmpdir] if setup.read_only else [setup.workspace, tmpdir]
    options = [sys.executable, "-I", "-S", str(SUPERVISOR), "--parent", str(os.getpid())]
    options += ["--remove-after", str(tmpdir)]
    if cgroup is not None:
        options += ["--cgroup", str(cgroup.path)]
    if setup.pid_namespace:
        options.append("--pidns")
    if setup.private_mounts:
        options += ["--private-dev", str(setup.limits.tmp_bytes)]
    if setup.sandbox == "weak" and os.geteuid() == 0:
        options.append("--seal")  # no Landlock: cgroup files and /proc/sys read-only
    if setup.sandbox == "weak+landlock":
        options.append("--landlock")
        for path in writable:
            options += ["--writable", str(path)]
    for name, value in rlimits(setup.limits, nproc=_nproc(setup.limits)):
        options += ["--rlimit", f"{name}={value}"]
    return [*options, "--", "bash", "-c", command], minimal_env(setup.workspace, str(tmpdir))


def _nproc(limits: ResourceLimits) -> int | None:
    """RLIMIT_NPROC counts every process of the user, and does not bind root at all."""
    return None if os.geteuid() == 0 else processes_of_user() + limits.processes


def exited(pidfd: int, timeout: float) -> bool:
    """Whether the process has exited, waiting up to ``timeout``; it is not reaped."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(timeout * 1000))


def kill(launch: Launch) -> None:
    """Stop the command and everything it started.

    The process is reaped only afterwards, so its group id cannot have been reused by then.
    """
    if launch.sandbox != "bwrap":
        with contextlib.suppress(ProcessLookupError):
            os.kill(launch.process.pid, signal.SIGTERM)  # the supervisor kills its tree first
        exited(launch.pidfd, SUPERVISOR_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(launch.process.pid, signal.SIGKILL)
    launch.process.wait()
    if launch.cgroup is not None:
        launch.cgroup.kill()


def _cleanup(cgroup: PidsCgroup | None, temp_dirs: list[Path]) -> None:
    if cgroup is not None:
        cgroup.remove()
    for folder in temp_dirs:
        shutil.rmtree(folder, ignore_errors=True)
