"""``ToolContext``: the bash family's settings are typed fields; the same names given in
``extra`` (before they were fields) are still read, and a field given outright wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from reactloop.errors import UsageError
from reactloop.sandbox.rlimits import ResourceLimits
from reactloop.tools import ToolContext
from reactloop.tools.families import bash


def test_the_old_extra_keys_are_read_into_the_fields() -> None:
    limits = ResourceLimits()
    old = ToolContext(
        extra={"sandbox_mode": "weak", "bash_limits": limits, "bash_max_output_chars": 99}
    )
    assert (old.sandbox_mode, old.bash_limits, old.bash_max_output_chars) == ("weak", limits, 99)
    given = ToolContext(sandbox_mode="bwrap", extra={"sandbox_mode": "weak"})
    assert given.sandbox_mode == "bwrap"
    assert ToolContext(extra={"mine": 1}).extra == {"mine": 1}


def test_the_bash_family_reads_the_fields(tmp_path: Path) -> None:
    (shell_tool,) = bash.tools(
        ToolContext(workspace=tmp_path, sandbox_mode="weak", bash_max_output_chars=123)
    )
    shell = shell_tool.function.__self__
    assert (shell.mode, shell.max_output_chars) == ("weak", 123)
    with pytest.raises(UsageError, match="unknown sandbox mode 'none'"):
        bash.tools(ToolContext(workspace=tmp_path, sandbox_mode="none"))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="bash_limits must be a ResourceLimits"):
        bash.tools(ToolContext(workspace=tmp_path, bash_limits="big"))  # type: ignore[arg-type]
