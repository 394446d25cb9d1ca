"""The run's time limit reaches the tools that bound their own time (bash, search)."""

from __future__ import annotations

import time
from pathlib import Path

from reactloop import Agent, Limits, ScriptedModel
from reactloop.tools.context import ToolContext
from reactloop.tools.families.bash import tools as bash_tools


def test_a_bash_command_ends_at_the_runs_time_limit(tmp_path: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "sleep 30", "timeout_seconds": 60}}
    model = ScriptedModel([{"tool_calls": [call]}, "done"])
    (bash,) = bash_tools(ToolContext(workspace=tmp_path))
    assert bash.bounded  # runs on the loop's thread, ended by its own deadline
    started = time.monotonic()
    result = Agent(model, [bash], limits=Limits(max_seconds=1.5)).run("sleep")
    elapsed = time.monotonic() - started
    assert elapsed < 8, elapsed
    assert str(result.stop_reason) == "timeout"
    tool_message = next(m for m in result.history if m.role == "tool")
    assert "timed_out" in (tool_message.content or "")
