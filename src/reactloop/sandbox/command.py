"""Run one shell command in the strongest sandbox available, with a timeout and caps.

``run_command`` picks bubblewrap when it works here (``"bwrap"``), else the weak mode: a
supervisor process with rlimits, a private ``TMPDIR``, its own PID namespace where it can
have one, and Landlock when the kernel has it (``"weak+landlock"``, else ``"weak"``); a weak
mode that cannot contain the command's processes here is refused (``sandbox.weak``). Either
way the command gets a minimal environment, its output is read with bounded memory, its disk
use is capped (``sandbox.budget``), and nothing it started outlives it: not on a timeout, not
after a normal exit, not when the harness dies. See docs/sandbox.md for the threat model.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import selectors
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reactloop.errors import ToolError
from reactloop.sandbox import landlock
from reactloop.sandbox.bwrap import bwrap_problem
from reactloop.sandbox.command_output import OutputCapture
from reactloop.sandbox.disk_budget import CHECK_SECONDS, MIB, DiskBudget
from reactloop.sandbox.launch import Launch, Setup, exited, kill, launched, minimal_env
from reactloop.sandbox.reclaim import reclaim
from reactloop.sandbox.rlimits import ResourceLimits
from reactloop.sandbox.weak import pid_namespace_problem, private_mounts_problem, weak_problem

__all__ = ["CommandResult", "Mode", "minimal_env", "run_command", "sandbox_mode"]

Mode = Literal["auto", "bwrap", "weak"]
READ_CHUNK = 64 * 1024
DRAIN_GRACE_SECONDS = 2.0
TIMED_OUT = "timed out"
ENDED = "; the command had ended before the check"
_spill_counter = itertools.count()


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """What one command did. ``exit_code`` follows the shell: 128+N when signal N killed it.

    ``stopped`` says why the harness killed the command before its timeout (a budget), and
    what it gave back of the disk the command took (``sandbox.reclaim``).
    """

    exit_code: int
    output: str
    sandbox: str
    truncated: bool = False
    timed_out: bool = False
    signal: str | None = None
    stopped: str | None = None
    full_output_path: Path | None = None
    output_bytes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The observation the bash tool returns to the model."""
        data: dict[str, Any] = {
            "exit_code": self.exit_code,
            "output": self.output,
            "sandbox": self.sandbox,
        }
        if self.signal:
            data["signal"] = self.signal
        if self.timed_out:
            data["timed_out"] = True
        if self.stopped:
            data["stopped"] = self.stopped
        if self.truncated:
            data["truncated"] = True
            data["output_bytes"] = self.output_bytes
            if self.full_output_path is not None:
                data["full_output"] = str(self.full_output_path)
        return data


def sandbox_mode(mode: Mode = "auto", *, use_landlock: bool = True) -> str:
    """The sandbox ``run_command`` would use: "bwrap", "weak+landlock" or "weak".

    Raises ``ToolError`` when the mode asked for cannot work here, never falling back to a
    mode weaker than the one asked for: forced bwrap without bwrap, or a weak mode that could
    not stop the command's processes from outliving the call.
    """
    if mode not in ("auto", "bwrap", "weak"):
        raise ToolError(f"unknown sandbox mode {mode!r}; use auto, bwrap or weak")
    bwrap = None
    if mode != "weak":
        bwrap = bwrap_problem()
        if bwrap is None:
            return "bwrap"
        if mode == "bwrap":
            raise ToolError(f"the bwrap sandbox is not available: {bwrap}")
    sandbox = "weak+landlock" if use_landlock and landlock.abi_version() >= 1 else "weak"
    problem = weak_problem(sandbox)
    if problem is not None:
        raise ToolError(problem if bwrap is None else f"{problem} ({bwrap})")
    return sandbox


def run_command(
    command: str,
    *,
    workspace: str | Path,
    timeout: float = 30.0,
    limits: ResourceLimits | None = None,
    mode: Mode = "auto",
    use_landlock: bool = True,
    output_dir: str | Path | None = None,
    max_output_chars: int = 3000,
    read_only_workspace: bool = False,
) -> CommandResult:
    """Run ``command`` with bash in ``workspace``; never leaves a process behind.

    ``read_only_workspace`` mounts (bwrap) or keeps (Landlock) the workspace read-only; the
    plain weak mode cannot enforce that, so the call is refused. Raises ``ToolError`` for what
    the caller got wrong (missing workspace, NUL bytes, a mode that is not available);
    everything the command does is reported in the result.
    """
    folder = _checked_workspace(workspace, command, timeout)
    sandbox = sandbox_mode(mode, use_landlock=use_landlock)
    if read_only_workspace and sandbox == "weak":
        raise ToolError("a read-only workspace needs bwrap or Landlock; neither works here")
    limits = limits or ResourceLimits()
    half = max(max_output_chars // 2, 1)
    capture = OutputCapture(head_bytes=half, tail_bytes=half, spill_path=_spill_path(output_dir))
    started = time.monotonic()
    setup = Setup(
        workspace=folder, sandbox=sandbox, limits=limits, read_only=read_only_workspace,
        pid_namespace=sandbox != "bwrap" and pid_namespace_problem() is None,
        private_mounts=sandbox != "bwrap" and private_mounts_problem() is None,
    )  # fmt: skip
    with launched(command, setup) as launch:
        stopped = _pump(launch, capture, started + timeout) or _late(launch.budget)
        _finish(launch, stopped is not None)
        _drain(launch.read_fd, capture)
        killed = stopped is not None and not stopped.endswith(ENDED)
        if stopped not in (None, TIMED_OUT) and not read_only_workspace:
            stopped = f"{stopped}; {_give_back(launch.budget, folder)}"
    capture.close()
    return _result(launch, capture, stopped, killed, max_output_chars, time.monotonic() - started)


def _result(
    launch: Launch,
    capture: OutputCapture,
    stopped: str | None,
    killed: bool,
    max_chars: int,
    seconds: float,
) -> CommandResult:
    exit_code, signal_name = _exit_status(launch.process.returncode, killed)
    output, cut = capture.text(max_chars)
    if capture.save_error:
        output += f"\n[{capture.save_error}]"
    return CommandResult(
        exit_code=exit_code,
        signal=signal_name,
        output=output,
        sandbox=launch.sandbox,
        truncated=cut,
        timed_out=stopped == TIMED_OUT,
        stopped=None if stopped in (None, TIMED_OUT) else stopped,
        full_output_path=capture.path,
        output_bytes=capture.total_bytes,
        seconds=seconds,
    )


def _exit_status(returncode: int, killed: bool) -> tuple[int, str | None]:
    """Shell-style exit code (128+N for signal N) and the signal's name when one killed it."""
    if killed:
        return 128 + signal.SIGKILL, "SIGKILL"
    code = 128 - returncode if returncode < 0 else returncode
    try:
        name = signal.Signals(code - 128).name if code > 128 else None
    except ValueError:
        name = None
    return code, name


def _checked_workspace(workspace: str | Path, command: str, timeout: float) -> Path:
    if "\x00" in command:
        raise ToolError("the command contains a NUL byte")
    if not command.strip():
        raise ToolError("the command is empty")
    if not timeout > 0:
        raise ToolError("timeout must be positive")
    folder = Path(workspace)
    if not folder.is_dir():
        raise ToolError(f"the workspace {folder} is not a folder")
    return folder.resolve()


def _spill_path(output_dir: str | Path | None) -> Path | None:
    if output_dir is None:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(output_dir) / f"bash-{stamp}-{os.getpid()}-{next(_spill_counter)}.txt"


def _pump(launch: Launch, capture: OutputCapture, deadline: float) -> str | None:
    """Read output until EOF; else why the command must be killed (``TIMED_OUT``, a budget)."""
    with selectors.DefaultSelector() as selector:
        selector.register(launch.read_fd, selectors.EVENT_READ, "output")
        selector.register(launch.pidfd, selectors.EVENT_READ, "exit")
        exited_at: float | None = None
        next_check = 0.0
        while True:
            now = time.monotonic()
            if now >= deadline:
                return TIMED_OUT
            if now >= next_check:
                if overspent := launch.budget.overspent():
                    return overspent
                next_check = now + CHECK_SECONDS
            if exited_at is not None and now - exited_at > DRAIN_GRACE_SECONDS:
                return None  # the command is gone; something it leaked still holds the pipe
            for key, _events in selector.select(min(deadline, next_check) - now):
                if key.data == "exit":
                    exited_at = time.monotonic()
                    selector.unregister(launch.pidfd)
                    continue
                chunk = os.read(launch.read_fd, READ_CHUNK)
                if not chunk:
                    return None
                capture.feed(chunk)


def _late(budget: DiskBudget) -> str | None:
    """A budget the command overspent between the last check and its end."""
    overspent = budget.overspent()
    return None if overspent is None else f"{overspent}{ENDED}"


def _give_back(budget: DiskBudget, workspace: Path) -> str:
    """Remove what a command stopped by its budget made (``sandbox.reclaim``); say so."""
    note = reclaim([workspace], budget.started_ns).note()
    left = budget.used_bytes()
    if left > budget.budget_bytes:
        note += f"; {left // MIB} MiB are still taken"
    return note


def _finish(launch: Launch, killed: bool) -> None:
    if killed or not exited(launch.pidfd, 0):
        kill(launch)
    launch.process.wait()
    if launch.cgroup is not None:
        launch.cgroup.kill()


def _drain(read_fd: int, capture: OutputCapture) -> None:
    """Read what is left in the pipe without waiting on a writer that leaked."""
    os.set_blocking(read_fd, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(read_fd, READ_CHUNK):
            capture.feed(chunk)
