"""A stdio MCP server that leaves processes behind: a ``setsid`` child and a daemon.

    python setsid_server.py PIDS_FILE

At start it runs ``setsid sleep 600`` (a new session: not in the server's process group) and a
daemon the classic way (fork, ``setsid``, fork again, the middle process exits: its parent is
gone before the server stops), and writes their PIDs and its own to PIDS_FILE, one a line.
"""

from __future__ import annotations

import os
import subprocess
import sys

from mcp.server import MCPServer

server = MCPServer("setsid")


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


def daemon() -> int:
    """A double-forked daemon in a session of its own; its PID, read from a pipe."""
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        grandchild = os.fork()
        if grandchild == 0:
            os.execvp("sleep", ["sleep", "600"])
        os.write(write, str(grandchild).encode())
        os._exit(0)
    os.close(write)
    pid = int(os.read(read, 32))
    os.close(read)
    os.wait()
    return pid


if __name__ == "__main__":
    child = subprocess.Popen(["setsid", "sleep", "600"], stdin=subprocess.DEVNULL)
    pids = [os.getpid(), child.pid, daemon()]
    with open(sys.argv[1], "w") as handle:
        handle.write("".join(f"{pid}\n" for pid in pids))
    server.run()
