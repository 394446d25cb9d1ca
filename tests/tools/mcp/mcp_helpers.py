"""Helpers for the MCP tests: where their servers are, and how to tell a process is gone."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, read_journal

HERE = Path(__file__).parent
MISBEHAVING = HERE / "misbehaving_server.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
EVERYTHING = HERE / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything"
EVERYTHING_JS = EVERYTHING / "dist" / "index.js"


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
