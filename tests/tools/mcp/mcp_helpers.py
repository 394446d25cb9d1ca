"""Helpers for the MCP tests: where their servers are, how to start a local HTTP one
(``served``), and how to tell a process is gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, read_journal

HERE = Path(__file__).parent
MISBEHAVING = HERE / "misbehaving_server.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
EVERYTHING = HERE / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything"
EVERYTHING_JS = EVERYTHING / "dist" / "index.js"


PORT = "{port}"  # in ``served``'s arguments: the free port it found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def served(script: Path, *arguments: str) -> Iterator[str]:
    """The URL of the MCP server ``script`` started with ``arguments`` (``PORT`` replaced by
    a free port) once it says on stderr that it listens; it is stopped when the generator is
    closed."""
    port = free_port()
    command = [sys.executable, str(script), *(a.replace(PORT, str(port)) for a in arguments)]
    return serving(command, "listening", f"http://127.0.0.1:{port}/mcp", script.name)


def serving(
    command: list[str],
    says: str,
    url: str,
    name: str,
    *,
    env: dict[str, str] | None = None,
    stdout: int | None = None,
) -> Iterator[str]:
    """``url``, once the server ``command`` starts says ``says`` on stderr; stopped when the
    generator is closed. Its stderr is read on, so that the pipe never fills and stops it."""
    server = subprocess.Popen(command, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if says in line:
                break
        else:
            pytest.fail(f"{name} did not start")
        threading.Thread(target=server.stderr.read, daemon=True).start()
        yield url
    finally:
        server.terminate()
        server.wait(10)


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def pids(starts: Path) -> list[int]:
    return [int(line) for line in starts.read_text().split()] if starts.exists() else []


def journaled(tmp_path: Path, model: Any, tools: Any, **limits: Any) -> tuple[Any, list[dict]]:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        result = Agent(model, tools, journal=journal, limits=Limits(**limits)).run("q")
    return result, read_journal(path)


def tool_results(events: list[dict]) -> list[dict]:
    return [e["result"] for e in events if e["type"] == "tool_result"]


def child_pids() -> set[int]:
    """The PIDs of this process's children (servers run in sessions of their own)."""
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """Wait, without polling, until the process has exited; False if it is still running."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return bool(ready)
