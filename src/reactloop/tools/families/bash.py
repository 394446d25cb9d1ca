"""The ``bash`` tool family: run a shell command in the workspace, sandboxed.

Each call runs in bubblewrap when it works here, else in the weak mode (supervisor, rlimits,
Landlock when the kernel has it); the result names the mode. See docs/sandbox.md.

Settings come from ``ToolContext`` (all optional): ``sandbox_mode`` ("auto", "bwrap",
"weak"), ``bash_limits`` (a ``ResourceLimits``), ``bash_max_output_chars`` (int). A command's
timeout never reaches past the run's deadline (``registry.run_deadline``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from reactloop.errors import ToolError, UsageError
from reactloop.sandbox.command import Mode, run_command, sandbox_mode
from reactloop.sandbox.rlimits import ResourceLimits
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext, run_deadline
from reactloop.tools.plain import plain_tool

MAX_TIMEOUT_SECONDS = 600
DEFAULT_TIMEOUT_SECONDS = 30


def tools(context: ToolContext) -> list[Tool]:
    """The ``bash`` family for ``--tools bash``: needs ``context.workspace``."""
    if context.workspace is None:
        raise UsageError("the bash tool needs a workspace: pass --workspace DIR")
    workspace = Path(context.workspace)
    if not workspace.is_dir():
        raise UsageError(f"the workspace {workspace} is not a folder")
    mode: Mode = context.sandbox_mode
    if mode not in ("auto", "bwrap", "weak"):
        raise UsageError(f"unknown sandbox mode {mode!r}; use auto, bwrap or weak")
    limits = context.bash_limits or ResourceLimits()
    if not isinstance(limits, ResourceLimits):
        raise UsageError("ToolContext.bash_limits must be a ResourceLimits")
    shell = Shell(
        workspace,
        mode=mode,
        limits=limits,
        output_dir=context.output_dir,
        read_only=context.read_only,
        max_output_chars=int(context.bash_max_output_chars),
    )
    return [plain_tool(shell.bash, description=shell.description(), bounded=True)]


class Shell:
    """Holds the settings; ``bash`` is the function the model calls."""

    def __init__(
        self,
        workspace: Path,
        *,
        mode: Mode = "auto",
        limits: ResourceLimits | None = None,
        output_dir: Path | None = None,
        read_only: bool = False,
        max_output_chars: int = 3000,
    ) -> None:
        self.workspace = workspace
        self.mode = mode
        self.limits = limits or ResourceLimits()
        self.output_dir = output_dir
        self.read_only = read_only
        self.max_output_chars = max_output_chars

    def description(self) -> str:
        where = "read-only " if self.read_only else ""
        try:
            sandbox = sandbox_mode(self.mode)
        except Exception as exc:  # reported on use; the description must still build
            sandbox = f"unavailable ({exc})"
        return (
            f"Run a bash command in the {where}workspace (the current directory) and return "
            "its exit code and combined stdout+stderr (long output keeps head and tail). "
            f"Sandbox: {sandbox}; no network; only the workspace and /tmp are writable; "
            "background processes are killed when the command ends."
        )

    def bash(self, command: str, timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS) -> dict[str, Any]:
        """Run a bash command in the workspace.

        Args:
            command: the shell command, e.g. "python -m pytest -q"
            timeout_seconds: kill the command and everything it started after this many
                seconds (1 to 600)
        """
        timeout = _within_the_run(min(max(int(timeout_seconds), 1), MAX_TIMEOUT_SECONDS))
        result = run_command(
            command,
            workspace=self.workspace,
            timeout=timeout,
            limits=self.limits,
            mode=self.mode,
            output_dir=self.output_dir,
            max_output_chars=self.max_output_chars,
            read_only_workspace=self.read_only,
        )
        return result.to_dict()


def _within_the_run(timeout: float) -> float:
    deadline = run_deadline()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if not left > 0:
        raise ToolError("the run's time limit has passed; the command was not run")
    return min(timeout, left)
