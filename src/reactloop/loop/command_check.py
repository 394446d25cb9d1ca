"""``CommandCheck``: a command as a completion check (``Agent(verify=CommandCheck(...))``).

The command runs with bash in the workspace, sandboxed like the ``bash`` tool: the workspace
holds what the model wrote, and a test run executes it. Exit 0 accepts the answer; anything
else refuses it with the command's output (head and tail), which the model then sees. It is a
module of its own so that ``import reactloop`` does not load the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reactloop.sandbox.command import Mode, run_command

MAX_OUTPUT = 4000  # characters of the command's output in a refusal


@dataclass(frozen=True)
class CommandCheck:
    """``command`` run in ``workspace`` (sandbox ``mode`` as for the ``bash`` tool), at most
    ``timeout`` seconds."""

    command: str
    workspace: str | Path = "."
    timeout: float = 300.0
    mode: Mode = "auto"

    def __call__(self, answer: str) -> bool | str:
        result = run_command(
            self.command,
            workspace=Path(self.workspace),
            timeout=self.timeout,
            mode=self.mode,
            max_output_chars=MAX_OUTPUT,
        )
        if result.exit_code == 0 and not result.timed_out:
            return True
        how = "timed out" if result.timed_out else f"exited with {result.exit_code}"
        return f"`{self.command}` {how}:\n{result.output}"
