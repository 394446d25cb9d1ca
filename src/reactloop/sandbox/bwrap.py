"""The strong mode: bubblewrap's command line, and a cached check that it works here.

Read-only root, the workspace bound writable at its own path, a private ``/tmp`` and
``/dev/shm`` (RAM-backed tmpfs capped with ``--size``; a bubblewrap too old for ``--size``
gets folders on disk instead, which the disk budget watches), ``/dev`` itself read-only, the
interpreter's prefix bound read-only when it lies under a masked folder such as ``/tmp`` (a
virtual environment there stays usable), a fresh ``/proc`` with ``/proc/sys`` and
``/proc/sysrq-trigger`` read-only (bwrap itself protects only ``irq`` and ``bus``; for root,
``sys`` would stay writable), a minimal ``/dev``, every namespace unshared (no network; own
PID, IPC, UTS, user and cgroup namespaces), all capabilities dropped, a new session (no
TIOCSTI), and death with the harness.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reactloop.sandbox.rlimits import ResourceLimits, ulimit_prelude

__all__ = [
    "PrivateDirs",
    "bwrap_argv",
    "bwrap_path",
    "bwrap_problem",
    "bwrap_status",
    "bwrap_supports_size",
    "interpreter_binds",
]

MASKED_DIRS = ("/tmp", "/dev", "/proc")
INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"


@dataclass(frozen=True)
class PrivateDirs:
    """Host folders bound as ``/tmp`` and ``/dev/shm`` when bwrap cannot size a tmpfs."""

    tmp: Path
    shm: Path


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
    tmp_bytes: int = ResourceLimits().tmp_bytes,
    private_dirs: PrivateDirs | None = None,
    read_only_paths: Sequence[Path] = (),
) -> list[str]:
    """The full argv that runs ``command`` with bash inside the sandbox.

    ``limits_inside`` sets the rlimits with a ``ulimit`` prelude inside the sandbox (one more
    bash start); without it the caller sets them on bwrap itself (``prlimit``).
    ``private_dirs`` replaces the sized tmpfs mounts (for a bwrap without ``--size``);
    ``read_only_paths`` are bound read-only at their own paths before the workspace.
    """
    bind = "--ro-bind" if read_only_workspace else "--bind"
    argv = [executable, "--ro-bind", "/", "/", "--dev", "/dev"]
    argv += _private("/dev/shm", tmp_bytes, private_dirs.shm if private_dirs else None)
    argv += [
        "--remount-ro", "/dev",
        "--proc", "/proc",
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
    ]  # fmt: skip
    argv += _private("/tmp", tmp_bytes, private_dirs.tmp if private_dirs else None)
    for path in read_only_paths:
        argv += ["--ro-bind", str(path), str(path)]
    argv += [
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


def _private(target: str, size: int, folder: Path | None) -> list[str]:
    if folder is not None:
        return ["--bind", str(folder), target]
    return ["--size", str(size), "--tmpfs", target]


def interpreter_binds() -> list[Path]:
    """The interpreter's prefixes that a masked folder (``/tmp``) would hide in the sandbox.

    The sandbox's ``PATH`` starts with the interpreter's ``bin``; a virtual environment under
    ``/tmp`` must therefore be bound read-only at its own path, and so must its base.
    """
    found: list[Path] = []
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        for candidate in (Path(os.path.abspath(prefix)), Path(os.path.realpath(prefix))):
            masked = any(
                candidate.is_relative_to(folder) and candidate != Path(folder)
                for folder in MASKED_DIRS
            )
            if masked and candidate.is_dir() and candidate not in found:
                found.append(candidate)
    return sorted(found, key=lambda path: len(path.parts))


@functools.cache
def bwrap_supports_size() -> bool:
    """Whether the installed bubblewrap knows ``--size`` (0.8.0 and later; cached)."""
    executable = bwrap_path()
    if executable is None:
        return False
    try:
        done = subprocess.run(
            [executable, "--help"], capture_output=True, timeout=10, env={}, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--size" in done.stdout + done.stderr


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap runs here with the flags we use, else why it does not (cached)."""
    executable = bwrap_path()
    if executable is None:
        return "bwrap is not installed"
    try:
        with tempfile.TemporaryDirectory(prefix="reactloop-bwrap-check-") as folder:
            done = subprocess.run(
                _check_argv(executable, Path(folder)),
                stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={}, check=False,
            )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"bwrap does not work here: {message[-1] if message else done.returncode}"
    return None


def _check_argv(executable: str, folder: Path) -> list[str]:
    workspace = folder / "workspace"
    workspace.mkdir()
    private = None
    if not bwrap_supports_size():
        private = PrivateDirs(tmp=folder / "tmp", shm=folder / "shm")
        private.tmp.mkdir()
        private.shm.mkdir()
    return bwrap_argv(
        "true", workspace=workspace, env={}, limits_inside=ResourceLimits(),
        executable=executable, private_dirs=private, read_only_paths=interpreter_binds(),
    )  # fmt: skip


def bwrap_status() -> tuple[bool, str]:
    """Whether the bwrap sandbox works here, and one line saying why or how to get it."""
    problem = bwrap_problem()
    if problem == "bwrap is not installed":
        return False, f"bwrap is not installed; {INSTALL_HINT}"
    if problem is not None:
        return False, f"{problem} (user namespaces may be disabled here)"
    if bwrap_supports_size():
        return True, f"bubblewrap works here ({bwrap_path()}); /tmp is a sized tmpfs"
    return True, (
        f"bubblewrap works here ({bwrap_path()}), but is older than 0.8.0: /tmp is a watched "
        "folder on disk instead of a sized tmpfs"
    )
