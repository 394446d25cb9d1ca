"""``async def`` tools are awaited on the run's own event loop, and sync and async tools take
every path alike: one call, a concurrent read-only batch, approval, the loop guard, the time
limit."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from reactloop import (
    Agent,
    FunctionModel,
    Limits,
    ModelTurn,
    ScriptedModel,
    StopReason,
    Tool,
    ToolCall,
    tool,
)
from reactloop.loop.runtime.executor import run_now
from reactloop.models.base import ModelRequest
from reactloop.tools.base import make_tool
from reactloop.tools.toolbox import Toolbox

loops: list[asyncio.AbstractEventLoop] = []


@tool(read_only=True)
async def a_double(n: int) -> int:
    """Double n, asynchronously."""
    loops.append(asyncio.get_running_loop())
    await asyncio.sleep(0)
    return 2 * n


@tool(read_only=True)
def s_double(n: int) -> int:
    """Double n."""
    return 2 * n


@tool
async def a_write(n: int) -> str:
    """Write n (a side effect), asynchronously."""
    await asyncio.sleep(0)
    return f"wrote {n}"


@tool
def s_write(n: int) -> str:
    """Write n (a side effect)."""
    return f"wrote {n}"


DOUBLES = {"async": a_double, "sync": s_double}
WRITES = {"async": a_write, "sync": s_write}


def calls(name: str, *ns: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=f"c{i}", name=name, arguments=json.dumps({"n": n})) for i, n in enumerate(ns)
    )


def outputs(result: Any) -> list[Any]:
    return [json.loads(m.content).get("output") for m in result.history if m.role == "tool"]


def errors(result: Any) -> list[str]:
    return [json.loads(m.content).get("error") for m in result.history if m.role == "tool"]


@pytest.fixture(autouse=True)
def _forget_loops() -> None:
    loops.clear()


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("max_seconds", [None, 60.0], ids=["no-limit", "limit"])
def test_one_call_is_run_and_its_value_returned(kind: str, max_seconds: float | None) -> None:
    double = DOUBLES[kind]
    model = ScriptedModel([ModelTurn(tool_calls=calls(double.name, 21)), "done"])
    result = Agent(model, [double], limits=Limits(max_seconds=max_seconds)).run("q")
    assert (result.answer, outputs(result)) == ("done", [42])


def test_async_tools_of_a_run_share_one_event_loop_the_harness_owns() -> None:
    model = ScriptedModel(
        [
            ModelTurn(tool_calls=calls("a_double", 1)),
            ModelTurn(tool_calls=calls("a_double", 2)),
            "done",
        ]
    )
    Agent(model, [a_double]).run("q")
    assert len(loops) == 2 and loops[0] is loops[1]
    assert loops[0].is_closed()  # ended with the run


def test_an_async_tool_works_when_the_caller_runs_an_event_loop_itself() -> None:
    async def main() -> Any:
        model = ScriptedModel([ModelTurn(tool_calls=calls("a_double", 4)), "done"])
        return Agent(model, [a_double]).run("q")

    assert outputs(asyncio.run(main())) == [8]


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_read_only_calls_of_one_turn_run_concurrently(kind: str) -> None:
    if kind == "async":
        gate = asyncio.Event()
        arrived: list[int] = []

        async def meet(n: int) -> int:
            arrived.append(n)
            if len(arrived) == 3:
                gate.set()
            await asyncio.wait_for(gate.wait(), 10)  # a timeout if they ran one by one
            return n

        fn: Any = meet
    else:
        barrier = threading.Barrier(3, timeout=10)

        def meet_sync(n: int) -> int:
            barrier.wait()
            return n

        fn = meet_sync
    meet_tool = make_tool(fn, name="meet", read_only=True)
    model = ScriptedModel([ModelTurn(tool_calls=calls("meet", 1, 2, 3)), "done"])
    result = Agent(model, [meet_tool]).run("q")
    assert outputs(result) == [1, 2, 3]


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_the_approver_sees_the_decoded_arguments_and_can_decline(kind: str) -> None:
    write = WRITES[kind]
    seen: list[Any] = []

    def approve(call: Any, tool: Tool) -> bool | str:
        seen.append(call.arguments)
        return call.arguments["n"] == 1 or "only n=1"

    model = ScriptedModel([ModelTurn(tool_calls=calls(write.name, 1, 2)), "done"])
    result = Agent(model, [write], approve=approve).run("q")
    assert seen == [{"n": 1}, {"n": 2}]
    assert outputs(result)[0] == "wrote 1" and errors(result)[1] == "not run: only n=1"


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_the_loop_guard_stops_repeats_of_either_kind(kind: str) -> None:
    double = DOUBLES[kind]
    turns = [ModelTurn(tool_calls=calls(double.name, 5)) for _ in range(3)]
    result = Agent(ScriptedModel([*turns, "five"]), [double]).run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert outputs(result)[0] == 10 and "already called" in errors(result)[1]


def test_an_async_tool_is_cancelled_at_the_time_limit() -> None:
    cancelled = threading.Event()

    @tool
    async def hang() -> str:
        """Never finish."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    started = time.monotonic()
    model = ScriptedModel([ModelTurn(tool_calls=(ToolCall(id="h", name="hang"),)), "x"])
    result = Agent(model, [hang], limits=Limits(max_seconds=0.5)).run("q")
    assert time.monotonic() - started < 5
    assert result.stop_reason is StopReason.TIMEOUT
    assert errors(result)[0].startswith("cancelled at the time limit")
    assert cancelled.is_set()


def test_a_concurrent_batch_past_the_limit_keeps_the_results_that_came_in_time() -> None:
    release = threading.Event()

    @tool(read_only=True)
    def slow(n: int) -> int:
        """Slow for n=2."""
        if n == 2:
            release.wait(30)
        return n

    model = ScriptedModel([ModelTurn(tool_calls=calls("slow", 1, 2, 3)), "x"])
    try:
        result = Agent(model, [slow], limits=Limits(max_seconds=0.5)).run("q")
    finally:
        release.set()
    assert result.stop_reason is StopReason.TIMEOUT
    assert outputs(result) == [1, None, 3]
    assert errors(result)[1].startswith("abandoned at the time limit")


def test_an_async_tool_raising_is_an_observation() -> None:
    @tool
    async def fails() -> str:
        """Fail."""
        raise SystemExit(4)

    model = ScriptedModel([ModelTurn(tool_calls=(ToolCall(id="f", name="fails"),)), "done"])
    result = Agent(model, [fails]).run("q")
    assert result.answer == "done" and errors(result) == ["SystemExit: 4"]


def test_an_async_tool_raising_keyboard_interrupt_cancels_the_run() -> None:
    @tool
    async def stop() -> str:
        """Ctrl-C."""
        raise KeyboardInterrupt

    model = ScriptedModel([ModelTurn(tool_calls=(ToolCall(id="s", name="stop"),)), "x"])
    result = Agent(model, [stop]).run("q")
    assert result.stop_reason is StopReason.CANCELLED
    assert errors(result)[0].startswith("cancelled")


def test_the_toolbox_alone_awaits_async_tools_too() -> None:
    (result,) = run_now(Toolbox([a_double]), calls("a_double", 3))
    assert result.output == 6
    assert Toolbox([a_double]).execute(calls("a_double", 5)[0]).output == 10


def test_the_toolbox_alone_awaits_an_async_tool_from_code_that_runs_an_event_loop() -> None:
    """``Toolbox.execute`` called from async code: the tool gets a loop of its own, on a thread
    of its own (this thread's loop is busy waiting for the call)."""

    async def caller() -> tuple[Any, asyncio.AbstractEventLoop]:
        return Toolbox([a_double]).execute(calls("a_double", 4)[0]), asyncio.get_running_loop()

    result, callers_loop = asyncio.run(caller())
    assert result.output == 8
    assert loops[-1] is not callers_loop


def test_a_ctrl_c_in_a_call_the_toolbox_runs_alone_is_an_error_result() -> None:
    @tool
    def stop() -> str:
        """Ctrl-C."""
        raise KeyboardInterrupt

    @tool
    async def astop() -> str:
        """Ctrl-C, asynchronously."""
        raise KeyboardInterrupt

    for name in ("stop", "astop"):
        result = Toolbox([stop, astop]).execute(ToolCall(id="k", name=name))
        assert not result.ok and result.executed
        assert result.error == "cancelled: the call was interrupted while it ran"


def _model_that_notes_its_thread(threads: list[threading.Thread], tool_name: str) -> FunctionModel:
    def reply(request: ModelRequest) -> ModelTurn:
        threads.append(threading.current_thread())
        if any(m.role == "tool" for m in request.messages):
            return ModelTurn(text="done")
        return ModelTurn(tool_calls=(ToolCall(id="w", name=tool_name),))

    return FunctionModel(reply)


@pytest.mark.parametrize(("bounded", "max_seconds"), [(False, 60.0), (True, 60.0), (False, None)])
def test_a_sync_tool_runs_inline_on_the_thread_that_runs_the_loop(
    bounded: bool, max_seconds: float | None
) -> None:
    """No hand-off a call: under a limit the whole run goes on a run thread of its own (which
    the caller's thread gives up on at the limit: ``loop/runtime/custody.py``), without one it runs
    on the caller's thread; either way the tools run on the loop's thread."""
    loop_threads: list[threading.Thread] = []
    threads: list[threading.Thread] = []

    def where() -> str:
        threads.append(threading.current_thread())
        return "here"

    probe = make_tool(where, bounded=bounded)
    model = _model_that_notes_its_thread(loop_threads, "where")
    Agent(model, [probe], limits=Limits(max_seconds=max_seconds)).run("q")
    assert threads == loop_threads[:1] and set(loop_threads) == set(threads)
    assert (threads == [threading.current_thread()]) is (max_seconds is None)


def test_an_async_tool_runs_on_the_thread_that_runs_the_loop() -> None:
    where: list[threading.Thread] = []
    loop_threads: list[threading.Thread] = []

    @tool(read_only=True)
    async def probe() -> str:
        """Say where it ran."""
        where.append(threading.current_thread())
        return "here"

    model = _model_that_notes_its_thread(loop_threads, "probe")
    Agent(model, [probe], limits=Limits(max_seconds=60)).run("q")
    assert where == loop_threads[:1]  # no hop to a loop thread


def test_an_async_tool_that_ignores_its_cancellation_does_not_hold_the_run() -> None:
    ignored = threading.Event()

    @tool
    async def stubborn() -> str:
        """Refuse to be cancelled."""
        while True:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                ignored.set()

    started = time.monotonic()
    model = ScriptedModel([ModelTurn(tool_calls=(ToolCall(id="s", name="stubborn"),)), "x"])
    result = Agent(model, [stubborn], limits=Limits(max_seconds=0.5)).run("q")
    assert time.monotonic() - started < 10
    assert result.stop_reason is StopReason.TIMEOUT
    assert errors(result)[0].startswith("cancelled at the time limit")
    assert ignored.is_set()


def test_a_turn_of_sync_and_async_read_only_calls_runs_them_together() -> None:
    barrier = threading.Barrier(2, timeout=10)
    gate = threading.Event()

    @tool(read_only=True)
    def sync_side(n: int) -> int:
        """Meet the async call."""
        barrier.wait()
        gate.wait(10)
        return n

    @tool(read_only=True)
    async def async_side(n: int) -> int:
        """Meet the sync call, without blocking the loop."""
        await asyncio.to_thread(barrier.wait)
        gate.set()
        return n * 10

    turn = ModelTurn(
        tool_calls=(
            *calls("sync_side", 1),
            ToolCall(id="b", name="async_side", arguments='{"n": 2}'),
        )
    )
    model = ScriptedModel([turn, "done"])
    result = Agent(model, [sync_side, async_side], limits=Limits(max_seconds=60)).run("q")
    assert result.answer == "done" and outputs(result) == [1, 20]
