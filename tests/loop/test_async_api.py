"""``await agent.arun(task)`` and ``async for event in agent.astream(task)``: the same loop on
a thread of its own, from a running event loop; asyncio cancellation ends the run
``cancelled`` with its journal complete; concurrent runs share nothing."""

from __future__ import annotations

import asyncio
import contextvars
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    ModelRequest,
    ModelTurn,
    ScriptedModel,
    StopReason,
    ToolCall,
    read_journal,
    tool,
)

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


@tool(read_only=True)
async def a_triple(n: int) -> int:
    """Triple n, asynchronously."""
    await asyncio.sleep(0)
    return 3 * n


@tool(read_only=True)
def whose_request() -> str:
    """The request id of the caller's context."""
    return REQUEST_ID.get()


def triple_then_answer(request: ModelRequest) -> ModelTurn:
    """Calls ``a_triple`` on the number in the task, then answers with the result."""
    results = [m for m in request.messages if m.role == "tool"]
    if results:
        return ModelTurn(text=str(json.loads(results[-1].content)["output"]))
    task = next(m.content for m in request.messages if m.kind == "task")
    n = re.search(r"\d+", task)
    assert n is not None
    call = ToolCall(id="c", name="a_triple", arguments=json.dumps({"n": int(n.group())}))
    return ModelTurn(tool_calls=(call,))


def check_journal(path: Path) -> list[dict[str, Any]]:
    """Exactly one run: one run_start first, one stop last, every call answered once."""
    events = read_journal(path)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "stop" and kinds.count("stop") == 1
    calls = [e["call"]["id"] for e in events if e["type"] == "tool_call"]
    results = [e["result"]["call_id"] for e in events if e["type"] == "tool_result"]
    assert sorted(calls) == sorted(results)
    return events


def test_arun_from_inside_a_running_loop_leaves_the_loop_free() -> None:
    ticked = threading.Event()

    @tool(read_only=True)
    def wait_for_tick() -> str:
        """Returns once the caller's event loop has run another coroutine."""
        return "ticked" if ticked.wait(10) else "the caller's loop was blocked"

    model = ScriptedModel([{"tool_calls": [{"name": "wait_for_tick"}]}, "done"])
    agent = Agent(model, [wait_for_tick])

    async def tick() -> None:
        ticked.set()

    async def main() -> Any:
        running = asyncio.create_task(agent.arun("q"))
        await tick()
        return await running

    result = asyncio.run(main())
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert json.loads(result.history[-2].content)["output"] == "ticked"


def test_many_concurrent_aruns_with_async_tools_share_nothing(tmp_path: Path) -> None:
    agent = Agent(FunctionModel(triple_then_answer), [a_triple])
    count = 24

    async def main() -> list[Any]:
        runs = [
            agent.arun(f"triple {n}", journal=Journal(tmp_path / f"run-{n}.jsonl"))
            for n in range(count)
        ]
        return await asyncio.gather(*runs)

    results = asyncio.run(main())
    for n, result in enumerate(results):
        assert result.answer == str(3 * n), result.error
        assert [m.content for m in result.history if m.kind == "task"] == [f"triple {n}"]
        assert result.trace == str(tmp_path / f"run-{n}.jsonl")
        events = check_journal(tmp_path / f"run-{n}.jsonl")
        assert events[0]["task"] == f"triple {n}"
        outputs = [e["result"]["output"] for e in events if e["type"] == "tool_result"]
        assert outputs == [3 * n]


def test_arun_carries_the_callers_context_to_the_tools() -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "whose_request"}]}, "done"])
    agent = Agent(model, [whose_request], limits=Limits(max_seconds=30))

    async def main() -> Any:
        REQUEST_ID.set("req-7")
        return await agent.arun("q")

    result = asyncio.run(main())
    assert json.loads(result.history[-2].content)["output"] == "req-7"


def cancel_while(started: threading.Event, agent: Agent, journal: Path) -> None:
    async def main() -> None:
        task = asyncio.create_task(agent.arun("q", journal=Journal(journal)))
        assert await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_cancelling_the_task_mid_async_tool_ends_the_run_cancelled(tmp_path: Path) -> None:
    started = threading.Event()

    @tool
    async def hang() -> str:
        """Never returns by itself."""
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    model = ScriptedModel([{"tool_calls": [{"name": "hang"}]}, "done"])
    agent = Agent(model, [hang])
    cancel_while(started, agent, tmp_path / "run.jsonl")
    events = check_journal(tmp_path / "run.jsonl")
    assert events[-1]["stop_reason"] == "cancelled"
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert result["ok"] is False and result["error"].startswith("cancelled")
    assert model.remaining == 1  # no model call after the cancellation


def test_cancelling_the_task_mid_sync_tool_ends_the_run_cancelled(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def block() -> str:
        """Blocks until released."""
        started.set()
        release.wait(30)
        return "late"

    model = ScriptedModel([{"tool_calls": [{"name": "block"}]}, "done"])
    agent = Agent(model, [block], limits=Limits(max_seconds=60))
    try:
        cancel_while(started, agent, tmp_path / "run.jsonl")
    finally:
        release.set()
    events = check_journal(tmp_path / "run.jsonl")
    assert events[-1]["stop_reason"] == "cancelled"


def test_cancelling_the_task_mid_model_call_ends_the_run_at_once_and_runs_none_of_its_calls(
    tmp_path: Path,
) -> None:
    in_model, released, returned = threading.Event(), threading.Event(), threading.Event()
    ran: list[str] = []

    @tool
    def write() -> str:
        """A side effect."""
        ran.append("write")
        return "written"

    def model(request: ModelRequest) -> ModelTurn:
        in_model.set()
        released.wait(10)  # this model call outlasts the run: it returns once the run is over
        returned.set()
        return ModelTurn(tool_calls=(ToolCall(id="w", name="write"),))

    agent = Agent(FunctionModel(model), [write])
    cancel_while(in_model, agent, tmp_path / "run.jsonl")
    assert not returned.is_set()  # the run ended while its model call went on
    released.set()
    assert returned.wait(10)
    events = check_journal(tmp_path / "run.jsonl")
    assert events[-1]["stop_reason"] == "cancelled"
    assert events[-1]["error"] == "interrupted during the model call"
    assert not [e for e in events if e["type"] in ("turn", "tool_call", "tool_start")]
    assert ran == []
    assert not agent.cancel_requested  # the run is over: nothing is left to cancel


def test_astream_yields_the_journals_events_then_holds_the_result(tmp_path: Path) -> None:
    agent = Agent(FunctionModel(triple_then_answer), [a_triple])

    async def main() -> tuple[list[Any], Any]:
        stream = agent.astream("triple 5", journal=Journal(tmp_path / "run.jsonl"))
        return [event async for event in stream], stream.result

    events, result = asyncio.run(main())
    journaled = read_journal(tmp_path / "run.jsonl")
    assert [e.type for e in events] == [e["type"] for e in journaled]
    assert events[-1].data["answer"] == "15" == result.answer


def test_leaving_an_astream_early_cancels_the_run(tmp_path: Path) -> None:
    started = threading.Event()

    @tool
    async def hang() -> str:
        """Never returns by itself."""
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    model = ScriptedModel([{"tool_calls": [{"name": "hang"}]}, "done"])
    agent = Agent(model, [hang])

    async def main() -> Any:
        async with agent.astream("q", journal=Journal(tmp_path / "run.jsonl")) as stream:
            async for event in stream:
                if event.type == "tool_call":
                    break
        return stream.result

    result = asyncio.run(main())
    assert result.stop_reason is StopReason.CANCELLED
    assert check_journal(tmp_path / "run.jsonl")[-1]["stop_reason"] == "cancelled"


def test_the_sync_run_still_works_inside_a_running_loop() -> None:
    agent = Agent(FunctionModel(triple_then_answer), [a_triple])

    async def main() -> Any:
        return agent.run("triple 2")

    assert asyncio.run(main()).answer == "6"


def test_a_results_repr_shows_the_history_by_its_length_not_its_text() -> None:
    """``asyncio.run`` formats the repr of its result: a long run's must stay short."""
    turns = [
        ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="echo_text", arguments=f'{{"n": {i}}}'),))
        for i in range(5)
    ]

    @tool(read_only=True)
    def echo_text(n: int) -> str:
        """A long observation."""
        return f"{n:04d}-" * 1000

    agent = Agent(ScriptedModel([*turns, ModelTurn(text="done")]), [echo_text])
    result = asyncio.run(agent.arun("go"))
    text = repr(result)
    assert text.startswith("RunResult(answer='done', stop_reason=")
    assert f"history=<{len(result.history)} messages>" in text
    assert "0003-0003" not in text and len(text) < 1000


# The fork is the point: Python 3.12+ warns that a multi-threaded process forks.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_arun_works_in_a_child_forked_after_an_arun() -> None:
    """The run threads are reused; a forked child has none of its parent's, and must start
    its own instead of handing its run to a thread that does not exist there."""
    import os

    def answer() -> str:
        agent = Agent(ScriptedModel([ModelTurn(text="done")]), [], protocol="native")
        return asyncio.run(agent.arun("go")).answer or ""

    assert answer() == "done"  # a run thread is now idle in this process
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write_end, answer().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    ready, _, _ = __import__("select").select([read_end], [], [], 30)
    got = os.read(read_end, 100).decode() if ready else "(no answer in 30 s)"
    os.close(read_end)
    os.waitpid(child, 0) if ready else os.kill(child, 9)
    assert got == "done"
