"""The strong mode: bubblewrap's command line, and a cached check that it works here.

Read-only root, the workspace bound writable at its own path, a private ``/tmp``, a fresh
``/proc`` with ``/proc/sys`` and ``/proc/sysrq-trigger`` read-only (bwrap itself protects only
``irq`` and ``bus``; for root, ``sys`` would stay writable), a minimal ``/dev``, every namespace
unshared (no network; own PID, IPC, UTS, user and cgroup namespaces), all capabilities
dropped, a new session (no TIOCSTI), and death with the harness.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from reactloop.sandbox.limits import ResourceLimits, ulimit_prelude


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def bwrap_argv(
    command: str,
    *,
    workspace: Path,
    env: Mapping[str, str],
    limits_inside: ResourceLimits | None = None,
    executable: str = "bwrap",
    read_only_workspace: bool = False,
) -> list[str]:
    """The full argv that runs ``command`` with bash inside the sandbox.

    ``limits_inside`` sets the rlimits with a ``ulimit`` prelude inside the sandbox (one more
    bash start); without it the caller sets them on bwrap itself (``prlimit``).
    """
    bind = "--ro-bind" if read_only_workspace else "--bind"
    argv = [
        executable,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--tmpfs", "/tmp",
        bind, str(workspace), str(workspace),
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--clearenv",
    ]  # fmt: skip
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", str(workspace), "--", "bash", "-c"]
    if limits_inside is None:
        return [*argv, command]
    prelude = f'{ulimit_prelude(limits_inside)} || exit 126; exec bash -c "$1"'
    return [*argv, prelude, "bash", command]


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap runs here with the flags we use, else why it does not (cached)."""
    executable = bwrap_path()
    if executable is None:
        return "bwrap is not installed"
    try:
        with tempfile.TemporaryDirectory(prefix="reactloop-bwrap-check-") as folder:
            argv = bwrap_argv(
                "true", workspace=Path(folder), env={}, limits_inside=ResourceLimits(),
                executable=executable,
            )  # fmt: skip
            done = subprocess.run(
                argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={}, check=False
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"bwrap does not work here: {message[-1] if message else done.returncode}"
    return None
