"""What a stdio MCP server starts goes when the client shuts it down, or when the harness dies:
a ``setsid`` child (not in the server's process group, which the SDK signals) and a daemon
that double-forked into a session of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from mcp_helpers import HERE, alive, wait_gone

from reactloop.tools.mcp import ServerConfig, open_mcp_tools

SETSID_SERVER = HERE / "setsid_server.py"
HARNESS = """
import sys
from reactloop.tools.mcp import ServerConfig, open_mcp_tools

config = ServerConfig(name="setsid", command=sys.executable, args=(sys.argv[1], sys.argv[2]))
with open_mcp_tools(servers=[config]) as tools:
    print(len(tools), flush=True)
    sys.stdin.read()  # until the test kills this process
"""


def started(pids_file: Path) -> list[int]:
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == 3 and all(alive(pid) for pid in pids)
    return pids


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])


def test_setsid_children_of_a_server_go_when_the_client_shuts_down(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids.txt"
    config = ServerConfig(
        name="setsid", command=sys.executable, args=(str(SETSID_SERVER), str(pids_file))
    )
    with open_mcp_tools(servers=[config]) as tools:
        assert len(tools) == 1
        server, child, daemon = started(pids_file)
        assert session_of(child) != session_of(server) != session_of(daemon)
    for pid in (server, child, daemon):
        assert wait_gone(pid, 5.0) and not alive(pid), f"{pid} outlived the client"


def test_setsid_children_of_a_server_go_when_the_harness_is_killed(tmp_path: Path) -> None:
    pids_file, script = tmp_path / "pids.txt", tmp_path / "harness.py"
    script.write_text(HARNESS)
    harness = subprocess.Popen(
        [sys.executable, str(script), str(SETSID_SERVER), str(pids_file)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert harness.stdout is not None and harness.stdout.readline().strip() == "1"
        pids = started(pids_file)
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    for pid in pids:
        assert wait_gone(pid, 5.0) and not alive(pid), f"{pid} outlived the harness"


def test_a_server_that_cannot_be_found_is_still_a_clear_error(tmp_path: Path) -> None:
    from reactloop.tools.mcp import mcp_tools

    config = ServerConfig(name="missing", command=f"reactloop-no-such-server-{os.getpid()}")
    try:
        mcp_tools(config)
    except Exception as exc:  # the same error as before the reaper
        assert "missing" in str(exc)
    else:
        raise AssertionError("a missing server started")
