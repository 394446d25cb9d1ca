"""Ctrl-C while ``reactloop run`` starts (here: while it starts an MCP server) exits 130, as a
Ctrl-C during the run does, not with click's ``Aborted!`` and 1."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

# An MCP "server" that presses Ctrl-C on the reactloop that starts it, then never answers. The
# server runs under the MCP reaper (tools/mcp/reaper.py), so reactloop is found up the tree.
PRESS_CTRL_C = """
import os, signal, time
pid = os.getppid()
while pid > 1 and b"reactloop\\x00run" not in open(f"/proc/{pid}/cmdline", "rb").read():
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
os.kill(pid, signal.SIGINT)
time.sleep(60)
"""


def test_ctrl_c_during_start_up_exits_130(tmp_path: Path) -> None:
    pytest.importorskip("mcp")  # the ``mcp`` extra (CI has it)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hi"]))
    server = shlex.join([sys.executable, "-c", PRESS_CTRL_C])
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "q", "--model", f"scripted:{script}",
         "--no-trace", "--mcp", server],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert "Aborted!" not in done.stderr
    assert "interrupted" in done.stderr
