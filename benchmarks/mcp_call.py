"""The cost of an MCP call through reactloop against a direct call through the SDK.

    python benchmarks/mcp_call.py [--calls 200] [--chunk 10]

The same stdio server (``mcp-server-time``, one process for each way) and the same call
(``get_current_time`` for ``Etc/UTC``), ``--calls`` times each way: the SDK's
``Client.call_tool`` awaited directly; reactloop's
``Toolbox.execute`` (argument validation against the server's schema, the hop to the
background event loop and back, result conversion); and the same through the
``ToolExecutor`` with a run deadline, as the loop runs tools (a worker thread as well).
The ways take turns, ``--chunk`` calls at a time, so that a busy machine slows them alike.
Prints each way's median and mean per-call time and reactloop's overhead over the SDK.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from reactloop import Toolbox, ToolCall
from reactloop.loop.runtime.executor import ToolExecutor
from reactloop.tools.mcp import MCPServers, ServerConfig

SERVER = Path(sys.executable).parent / "mcp-server-time"
ARGUMENTS = {"timezone": "Etc/UTC"}
CALL = ToolCall(id="b", name="get_current_time", arguments='{"timezone": "Etc/UTC"}')


async def sdk_chunk(client: Any, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await client.call_tool("get_current_time", ARGUMENTS)
        times.append(time.perf_counter() - started)
        assert not result.is_error
    return times


def toolbox_chunk(box: Toolbox, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = box.execute(CALL)
        times.append(time.perf_counter() - started)
        assert result.ok, result.error
    return times


def executor_chunk(box: Toolbox, executor: ToolExecutor, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = executor.run_one(box.prepare(CALL), time.monotonic() + 60)
        times.append(time.perf_counter() - started)
        assert result.ok, result.error
    return times


async def measure(calls: int, chunk: int) -> dict[str, list[float]]:
    """All of it in one task: the SDK's client must be left in the task that entered it."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    times: dict[str, list[float]] = {"sdk": [], "toolbox": [], "executor": []}
    config = ServerConfig(name="time", command=str(SERVER))
    parameters = StdioServerParameters(command=str(SERVER))
    async with Client(parameters, cache=None) as client:
        with MCPServers([config]) as servers:
            box = Toolbox(servers.tools)
            executor = ToolExecutor(box)
            await sdk_chunk(client, 3)  # warm up, each way
            toolbox_chunk(box, 3)
            executor_chunk(box, executor, 3)
            for _ in range(calls // chunk):
                times["sdk"] += await sdk_chunk(client, chunk)
                times["toolbox"] += await asyncio.to_thread(toolbox_chunk, box, chunk)
                times["executor"] += await asyncio.to_thread(executor_chunk, box, executor, chunk)
            executor.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--chunk", type=int, default=10)
    options = parser.parse_args()
    if not SERVER.exists():
        raise SystemExit("needs mcp-server-time: pip install mcp-server-time")
    times = asyncio.run(measure(options.calls, options.chunk))
    sdk = statistics.median(times["sdk"])
    print(f"{len(times['sdk'])} calls each way, per call:   median      mean   overhead")
    labels = {
        "sdk": "SDK Client.call_tool (direct)",
        "toolbox": "reactloop Toolbox.execute",
        "executor": "reactloop ToolExecutor + deadline",
    }
    for key, label in labels.items():
        median, mean = statistics.median(times[key]), statistics.fmean(times[key])
        extra = "" if key == "sdk" else f"{(median - sdk) * 1e6:+8.0f} us"
        print(f"  {label:34} {median * 1e6:6.0f} us {mean * 1e6:6.0f} us {extra}")


if __name__ == "__main__":
    main()
