"""An async tool's first step is taken at once, without a turn of the event loop (what
Python 3.12's eager tasks do): the tool must not be able to tell, whether it returns at once
or waits. Each test runs a tool through a whole run and checks what it saw."""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import AsyncIterator
from typing import Any

from reactloop import Agent, Limits, ModelTurn, ScriptedModel, StopReason, ToolCall, tool

seen: dict[str, Any] = {}
marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


def run_tool(name: str, n: int = 1, *, tools: list[Any], max_seconds: float | None = None) -> Any:
    turns = [
        ModelTurn(tool_calls=(ToolCall(id="c1", name=name, arguments=json.dumps({"n": n})),)),
        ModelTurn(text="done"),
    ]
    agent = Agent(ScriptedModel(turns), tools, limits=Limits(max_seconds=max_seconds))
    return agent.run("go")


def tool_output(result: Any) -> Any:
    (message,) = [m for m in result.history if m.role == "tool"]
    return json.loads(message.content)


@tool(read_only=True)
async def at_once(n: int) -> str:
    """Return without waiting, reporting what the tool sees of asyncio."""
    task = asyncio.current_task()
    seen["task"] = task
    seen["loop"] = asyncio.get_running_loop()
    seen["task_loop"] = task.get_loop() if task is not None else None
    marker.set("set by the tool")
    return f"n={n}"


@tool(read_only=True)
async def with_timeout(n: int) -> int:
    """Enter asyncio.timeout in the first step, then wait on a future of the loop."""
    async with asyncio.timeout(5):
        seen["task"] = asyncio.current_task()
        await asyncio.sleep(0.001)
        return n * 3


@tool(read_only=True)
async def times_out(n: int) -> int:
    """A timeout of its own that fires: TimeoutError, an observation."""
    async with asyncio.timeout(0.01):
        await asyncio.sleep(30)
    return n


@tool(read_only=True)
async def in_a_group(n: int) -> int:
    """A TaskGroup needs the current task from the very first step."""
    async with asyncio.TaskGroup() as group:
        first = group.create_task(asyncio.sleep(0, result=n))
        second = group.create_task(asyncio.sleep(0.001, result=n))
    return first.result() + second.result()


async def _numbers(n: int) -> AsyncIterator[int]:
    try:
        for i in range(n):
            yield i
    finally:
        seen["generator_closed"] = True


@tool(read_only=True)
async def iterates(n: int) -> int:
    """An async generator first iterated in the first step."""
    total = 0
    async for i in _numbers(n):
        total += i
    return total


@tool(read_only=True)
async def leaves_a_task(n: int) -> str:
    """Starts work it does not wait for: the next call must still run, at once or not."""
    seen.setdefault("background", []).append(asyncio.get_running_loop().create_future())
    asyncio.get_running_loop().call_soon(seen["background"][-1].set_result, n)
    return "left"


def test_a_tool_that_returns_at_once_runs_in_a_task_of_the_runs_own_loop() -> None:
    seen.clear()
    marker.set("the caller's")
    result = run_tool("at_once", 7, tools=[at_once])
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert tool_output(result)["output"] == "n=7"
    assert isinstance(seen["task"], asyncio.Task)
    assert seen["task"].done()
    assert seen["task_loop"] is seen["loop"]
    assert seen["loop"].is_closed()  # closed with the run
    assert marker.get() == "the caller's"  # the task ran in a copy of the context


def test_asyncio_timeout_entered_in_the_first_step_works_across_a_wait() -> None:
    seen.clear()
    result = run_tool("with_timeout", 4, tools=[with_timeout])
    assert tool_output(result)["output"] == 12
    assert isinstance(seen["task"], asyncio.Task)


def test_a_timeout_of_the_tools_own_fires_as_an_observation() -> None:
    result = run_tool("times_out", tools=[times_out])
    output = tool_output(result)
    assert output["ok"] is False
    assert "TimeoutError" in output["error"]
    assert result.stop_reason == StopReason.FINAL_ANSWER


def test_a_task_group_in_a_tool_works() -> None:
    result = run_tool("in_a_group", 5, tools=[in_a_group])
    assert tool_output(result)["output"] == 10


def test_an_async_generator_iterated_in_the_first_step_is_finalized() -> None:
    seen.clear()
    result = run_tool("iterates", 4, tools=[iterates])
    assert tool_output(result)["output"] == 6
    assert seen["generator_closed"] is True


def test_work_a_tool_leaves_behind_does_not_stop_the_next_calls() -> None:
    seen.clear()
    turns = [
        ModelTurn(
            tool_calls=(ToolCall(id=f"c{i}", name="leaves_a_task", arguments=f'{{"n": {i}}}'),)
        )
        for i in range(3)
    ]
    agent = Agent(ScriptedModel([*turns, ModelTurn(text="done")]), [leaves_a_task])
    result = agent.run("go")
    assert [json.loads(m.content)["output"] for m in result.history if m.role == "tool"] == [
        "left"
    ] * 3
    futures = seen["background"]
    # the callbacks left in the queue ran on the next turns of the loop, in order
    assert [f.result() for f in futures[:2]] == [0, 1]


def test_a_tool_that_waits_past_the_time_limit_is_still_cancelled() -> None:
    @tool(read_only=True)
    async def slow(n: int) -> int:
        """Wait far longer than the run may take."""
        try:
            await asyncio.sleep(60)
        finally:
            seen["slow_cancelled"] = True
        return n

    seen.clear()
    result = run_tool("slow", tools=[slow], max_seconds=0.2)
    output = tool_output(result)
    assert output["ok"] is False
    assert "cancelled at the time limit" in output["error"]
    assert seen["slow_cancelled"] is True


def test_keyboard_interrupt_raised_at_once_by_a_tool_cancels_the_run() -> None:
    @tool(read_only=True)
    async def interrupts(n: int) -> int:
        """Raise KeyboardInterrupt in the first step."""
        raise KeyboardInterrupt

    result = run_tool("interrupts", tools=[interrupts])
    assert result.stop_reason == StopReason.CANCELLED
    output = tool_output(result)
    assert output["ok"] is False
    assert output["error"].startswith("cancelled")


def test_an_async_http_client_works_in_a_tool() -> None:
    """httpx's AsyncClient (anyio underneath, which asks asyncio for the current task) makes a
    real request from a tool: its first step is taken at once, the rest on the loop."""
    import httpx

    from reactloop.testing import FakeOpenAIServer, completion

    @tool(read_only=True)
    async def fetch(n: int) -> int:
        """GET the fake server's chat endpoint and return the HTTP status."""
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(f"{server.base_url}/chat/completions", json={})
        return response.status_code + n

    with FakeOpenAIServer([completion("hi")]) as server:
        result = run_tool("fetch", 1, tools=[fetch])
    assert tool_output(result)["output"] == 201
