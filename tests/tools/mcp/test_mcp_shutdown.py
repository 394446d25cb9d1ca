"""Servers always stop: on Ctrl-C in the middle of a call (from the Python API and from
``reactloop run``, with and without a launcher in between), on an error, at exit; checked by
PID, with no traceback on stderr (anyio's or other)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_helpers import MISBEHAVING, alive, pids, wait_gone

from reactloop.tools.mcp import ServerConfig, open_mcp_tools

SCRIPT = """
import sys
from reactloop import Agent, Limits, ScriptedModel
from reactloop.tools.mcp import ServerConfig, open_mcp_tools

server, starts, fifo, seconds, launcher = sys.argv[1:6]
args = (server, "--starts", starts, "--hang-fifo", fifo)
if launcher == "shell":  # a launcher that stays the server's parent, as npx and uvx do
    config = ServerConfig(
        name="bad", command="sh", args=("-c", '"$0" "$@"; exit $?', sys.executable, *args)
    )
else:
    config = ServerConfig(name="bad", command=sys.executable, args=args)
model = ScriptedModel([{"tool_calls": [{"name": "hang", "arguments": {}}]}, "never"])
limits = Limits(max_seconds=None if seconds == "none" else float(seconds))
with open_mcp_tools(servers=[config]) as tools:
    result = Agent(model, tools, limits=limits).run("hang, please")
print(result.stop_reason)
"""

AT_EXIT = """
import sys
from reactloop.tools.mcp import ServerConfig, mcp_tools

server, starts = sys.argv[1:3]
args = (server, "--starts", starts, "--linger", "60")
tools = mcp_tools(ServerConfig(name="bad", command=sys.executable, args=args))
print(len(tools))
"""


def wait_for_call(fifo: Path) -> None:
    """Block until the server has the ``hang`` call (it writes to the FIFO first)."""
    import select

    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([reader], [], [], 20)
        assert ready, "the hang call never reached the server"
    finally:
        os.close(reader)


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.mark.parametrize(
    ("seconds", "launcher"),
    [("none", "none"), ("60", "none"), ("none", "shell")],
    ids=["caller-thread", "worker-thread", "through-a-launcher"],
)
def test_ctrl_c_during_a_call_stops_the_run_and_the_server(
    tmp_path: Path, seconds: str, launcher: str
) -> None:
    starts, fifo, script = tmp_path / "starts.txt", tmp_path / "hang.fifo", tmp_path / "run.py"
    os.mkfifo(fifo)
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), str(MISBEHAVING), str(starts), str(fifo), seconds, launcher],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_call(fifo)
        (server,) = pids(starts)
        processes = [server] if launcher == "none" else [server, parent_of(server)]
        assert launcher == "none" or processes[1] != process.pid  # a process between them
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert out.strip() == "cancelled"
    assert err == ""
    assert process.returncode == 0
    for pid in processes:  # the server, and the launcher too
        assert wait_gone(pid, 1.0) and not alive(pid)


def test_ctrl_c_in_reactloop_run_stops_the_server_without_a_traceback(tmp_path: Path) -> None:
    starts, fifo, script = tmp_path / "starts.txt", tmp_path / "hang.fifo", tmp_path / "s.json"
    os.mkfifo(fifo)
    script.write_text(json.dumps([{"tool_calls": [{"name": "hang", "arguments": {}}]}, "never"]))
    server_line = shlex.join(
        [sys.executable, str(MISBEHAVING), "--starts", str(starts), "--hang-fifo", str(fifo)]
    )
    command = [sys.executable, "-c", "from reactloop.cli import main; main()", "run", "q"]
    command += ["--model", f"scripted:{script}", "--mcp", server_line]
    command += ["--trace", str(tmp_path / "run.jsonl")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_call(fifo)
        (server,) = pids(starts)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 130
    assert "interrupted while a tool ran" in err and "Traceback" not in err
    assert wait_gone(server, 1.0) and not alive(server)


def test_an_error_inside_the_with_block_still_stops_the_server(
    tmp_path: Path, starts: Path
) -> None:
    config = ServerConfig(
        name="bad", command=sys.executable, args=(str(MISBEHAVING), "--starts", str(starts))
    )
    with pytest.raises(RuntimeError, match="boom"), open_mcp_tools(servers=[config]):
        raise RuntimeError("boom")
    (server,) = pids(starts)
    assert not alive(server)


def test_mcp_tools_without_a_with_block_stop_their_servers_at_exit(tmp_path: Path) -> None:
    starts, script = tmp_path / "starts.txt", tmp_path / "at_exit.py"
    script.write_text(AT_EXIT)
    done = subprocess.run(
        [sys.executable, str(script), str(MISBEHAVING), str(starts)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert int(done.stdout) > 0 and done.stderr == ""  # the server's tools came
    (server,) = pids(starts)
    assert wait_gone(server, 1.0) and not alive(server)  # it lingers 60 s unless signalled
