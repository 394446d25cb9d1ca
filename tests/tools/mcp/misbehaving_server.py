"""A small MCP server (stdio) that misbehaves on request, for the failure tests.

    python misbehaving_server.py [--starts FILE] [--slow-start S] [--exit-at-start]
                                 [--garbage-at-start] [--hang-fifo FIFO] [--linger S]
                                 [--hang-listing]

Every start appends the server's PID to ``--starts`` FILE (one line per start), so that a test
can count restarts and check by PID that no process is left.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time


def _note_start() -> None:
    """The PID first, before the SDK's imports: a start killed while it imports still counts."""
    if "--starts" in sys.argv[:-1]:
        with open(sys.argv[sys.argv.index("--starts") + 1], "a", encoding="utf-8") as starts:
            starts.write(f"{os.getpid()}\n")


_note_start()

from mcp.server import MCPServer  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402

server = MCPServer("misbehaving")
READ_ONLY = ToolAnnotations(read_only_hint=True)
OPTIONS = argparse.Namespace()
RAW_STDOUT = os.dup(1)


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True))
def remember(key: str, value: str) -> str:
    """Store a value under a key (again: the same result)."""
    return f"{key}={value}"


@server.tool()
def crash(message: str = "crashing on purpose") -> str:
    """Write a message to stderr and exit at once, without answering."""
    sys.stderr.write(f"RuntimeError: {message}\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer. With ``--hang-fifo``, open that FIFO for writing first: a test that opens
    it for reading knows, without sleeping, that the call has reached the server."""
    import anyio

    if OPTIONS.hang_fifo:
        await anyio.to_thread.run_sync(_open_fifo, OPTIONS.hang_fifo)
    await anyio.sleep(3600)
    return "unreachable"


def _open_fifo(path: str) -> None:
    with open(path, "w", encoding="utf-8") as fifo:
        fifo.write("hanging\n")


@server.tool()
async def garbage() -> str:
    """Write a line that is not JSON-RPC to stdout, then never answer."""
    import anyio

    os.write(RAW_STDOUT, b"this is not JSON-RPC {{{\n")  # the SDK diverts sys.stdout
    await anyio.sleep(3600)
    return "unreachable"


@server.tool()
async def not_utf8() -> str:
    """Write a line that is not UTF-8 to stdout, then never answer."""
    import anyio

    os.write(RAW_STDOUT, b"\xff\xfe not UTF-8 \x80\x81\n")
    await anyio.sleep(3600)
    return "unreachable"


@server.tool(annotations=READ_ONLY)
def big(megabytes: int) -> str:
    """A valid answer of ``megabytes`` MB of text."""
    return "0123456789abcdef" * (megabytes * 65536)


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after some seconds."""
    import anyio

    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def exit_soon() -> str:
    """Answer, then exit a moment later (the server dies between calls)."""
    threading.Timer(0.05, os._exit, args=(4,)).start()
    return "exiting"


@server.tool()
def fail(reason: str) -> str:
    """Raise an exception inside the tool: an isError result."""
    raise ValueError(reason)


async def _never_list() -> list[object]:
    import anyio

    await anyio.sleep(3600)
    return []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--exit-at-start", action="store_true")
    parser.add_argument("--garbage-at-start", action="store_true")
    parser.add_argument("--hang-fifo")
    parser.add_argument("--linger", type=float, default=0.0)
    parser.add_argument("--hang-listing", action="store_true")
    options = parser.parse_args(namespace=OPTIONS)
    if options.exit_at_start:
        sys.stderr.write("misbehaving: refusing to start\n")
        sys.exit(2)
    if options.slow_start:
        time.sleep(options.slow_start)
    if options.hang_listing:
        server.list_tools = _never_list  # type: ignore[method-assign]
    if options.garbage_at_start:
        sys.stdout.write("Server starting... (a banner on stdout)\n")
        sys.stdout.flush()
    server.run()
    time.sleep(options.linger)  # outlives its stdin: only a signal from the client ends it


if __name__ == "__main__":
    main()
