"""Whether the weak mode can keep its promise here that nothing a command starts outlives it.

The supervisor is a child subreaper, so ``setsid`` and double-forked children stay its
descendants; but a command that can signal the supervisor can kill it, and a root command can
leave the pids cgroup, and then its orphans escape both. One of these must hold:

- a PID namespace for the command (root, or a user namespace for other users): the command
  cannot reach the supervisor, and the kernel kills the namespace when the command ends;
- Landlock ABI 6 or later, which forbids signals to processes outside the sandbox (the
  subreaper keeps the rest), or Landlock and, as root, a pids cgroup it cannot leave.

Otherwise the weak mode is refused with a clear error rather than run without that promise;
so is the plain weak mode for root where no mount namespace can be made (``mounts``: it keeps
the cgroup files read-only).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

from reactloop.sandbox import landlock
from reactloop.sandbox.cgroup import PidsCgroup

__all__ = ["pid_namespace_problem", "private_mounts_problem", "weak_problem"]

SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")


@functools.cache
def pid_namespace_problem() -> str | None:
    """None when the supervisor can give a command its own PID namespace here (cached)."""
    argv = [sys.executable, "-I", "-S", SUPERVISOR, "--parent", str(os.getpid()), "--pidns"]
    argv += ["--", "/bin/sh", "-c", "test $$ = 2"]  # process 1 is the supervisor's init
    return _probe(argv, "the PID namespace check")


@functools.cache
def private_mounts_problem() -> str | None:
    """None when the supervisor can give a command a mount namespace with a minimal ``/dev``
    and its own ``/proc`` here (``mounts.private_system``; cached). Root can; another user
    only inside the user namespace of a PID namespace; a container without ``CAP_SYS_ADMIN``
    or a kernel that restricts user namespaces may refuse either."""
    if os.geteuid() != 0 and pid_namespace_problem() is not None:
        return "no user namespace to make mounts in"
    argv = [sys.executable, "-I", "-S", SUPERVISOR, "--parent", str(os.getpid())]
    argv += ["--pidns"] if pid_namespace_problem() is None else []
    argv += ["--private-dev", "65536", "--", "/bin/sh", "-c", "test -c /dev/null"]
    return _probe(argv, "the mount namespace check")


def _probe(argv: list[str], what: str) -> str | None:
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={}, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{what} failed to run: {exc}"
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1].removeprefix("reactloop sandbox: ") if lines else f"exit {done.returncode}"


@functools.cache
def _root_with_pids_cgroup() -> bool:
    if os.geteuid() != 0:
        return False
    cgroup = PidsCgroup.create(16)
    if cgroup is None:
        return False
    cgroup.remove()
    return True


def weak_problem(sandbox: str) -> str | None:
    """None when ``sandbox`` ("weak" or "weak+landlock") contains every process here.

    Root in the plain weak mode also needs a mount namespace: without one, cgroup files
    stay writable and the command could leave its pids cgroup (and the fork-bomb cap).
    """
    if sandbox == "weak" and os.geteuid() == 0 and (mounts := private_mounts_problem()):
        return (
            f"the weak sandbox cannot keep a root command in its pids cgroup here (no mount "
            f"namespace: {mounts}); install bubblewrap, or use Landlock"
        )
    namespace = pid_namespace_problem()
    if namespace is None:
        return None
    if sandbox == "weak+landlock" and (landlock.abi_version() >= 6 or _root_with_pids_cgroup()):
        return None
    return (
        f"the {sandbox} sandbox cannot stop a command's processes from outliving the call "
        f"here ({namespace}; no Landlock signal scoping); install bubblewrap"
    )
