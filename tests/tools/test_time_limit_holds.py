"""No tool can hold a run past its time limit, however it blocks, and a late result is discarded.

Each tool here blocks in its own way — an ``async def`` that sleeps or reads a socket or spins
without an ``await`` (the event loop it runs on is stuck with it), a sync tool likewise, a C
call that holds the GIL — until the test releases it, long after the run's limit. The run must
stop ``timeout`` before the tool ends, with the call's result saying it was abandoned, and what
the tool returns later must reach neither the history nor the journal. The tools are released
by events, never by the clock; the bounds are generous (the tools would block ``HOLD`` s).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    ModelTurn,
    ScriptedModel,
    StopReason,
    Tool,
    ToolCall,
    read_journal,
    tool,
)
from reactloop.loop.runtime.custody import MODEL_GRACE
from reactloop.models.base import ModelRequest

LIMIT = 1.0
HOLD = 15.0  # how long a tool would block if nothing released it


class Blocker:
    """What a blocking tool waits on, and how the test knows it has returned."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.returned = threading.Event()
        self.reader, self.writer = socket.socketpair()

    def free(self) -> None:
        self.release.set()
        self.writer.send(b"x")

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


@pytest.fixture
def blocker() -> Iterator[Blocker]:
    made = Blocker()
    yield made
    made.free()
    made.close()


def ctrl_c() -> None:
    """A real SIGINT, as the terminal sends: the process's main thread (pytest's) takes it."""
    os.kill(os.getpid(), signal.SIGINT)


def _block(how: str, blocker: Blocker) -> None:
    """Block the calling thread without giving an event loop a turn."""
    if how == "sleep":
        blocker.release.wait(HOLD)  # as time.sleep(HOLD), but the test can end it
    elif how == "io":
        blocker.reader.settimeout(HOLD)
        blocker.reader.recv(1)
    else:  # a CPU loop
        ends = time.monotonic() + HOLD
        while not blocker.release.is_set() and time.monotonic() < ends:
            pass


def blocking_tools(how: str, blocker: Blocker) -> tuple[Tool, Tool]:
    @tool
    async def stuck_async(n: int) -> str:
        """An async tool that blocks its event loop."""
        _block(how, blocker)
        blocker.returned.set()
        return "late result"

    @tool
    def stuck_sync(n: int) -> str:
        """A sync tool that blocks its thread."""
        _block(how, blocker)
        blocker.returned.set()
        return "late result"

    return stuck_async, stuck_sync


def run_one_call(
    chosen: Tool, tmp_path: Path, *, limit: float = LIMIT, run: str = "run"
) -> tuple[Any, float]:
    turns = [ModelTurn(tool_calls=(ToolCall(id="c1", name=chosen.name, arguments='{"n": 1}'),))]
    model = ScriptedModel([*turns, ModelTurn(text="done")])
    limits = Limits(max_seconds=limit, max_model_calls=3)
    started = time.monotonic()
    with Journal(tmp_path / "t.jsonl") as journal:
        agent = Agent(model, [chosen], limits=limits, journal=journal)
        if run == "arun":
            import asyncio

            result = asyncio.run(agent.arun("go"))
        else:
            result = agent.run("go")
    return result, time.monotonic() - started


def assert_abandoned(result: Any, trace: Path, elapsed: float, returned: threading.Event) -> None:
    assert not returned.is_set(), "the tool ended before the run did: nothing was tested"
    assert result.stop_reason is StopReason.TIMEOUT
    assert elapsed < LIMIT + 2.0, f"{elapsed:.1f} s for a {LIMIT} s limit"
    tool_messages = [m for m in result.history if m.role == "tool"]
    assert len(tool_messages) == 1 and "abandoned at the time limit" in tool_messages[0].content
    events = read_journal(trace)
    assert events[-1]["type"] == "stop"
    results = [e for e in events if e["type"] == "tool_result"]
    assert len(results) == 1 and results[0]["result"]["ok"] is False


@pytest.mark.parametrize("how", ["sleep", "io", "cpu"])
@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("run", ["run", "arun"])
def test_a_blocked_tool_cannot_hold_the_run_and_its_late_result_is_discarded(
    tmp_path: Path, blocker: Blocker, how: str, kind: str, run: str
) -> None:
    stuck_async, stuck_sync = blocking_tools(how, blocker)
    chosen = stuck_async if kind == "async" else stuck_sync
    result, elapsed = run_one_call(chosen, tmp_path, run=run)
    assert_abandoned(result, tmp_path / "t.jsonl", elapsed, blocker.returned)
    journal_before = (tmp_path / "t.jsonl").read_bytes()
    blocker.free()
    assert blocker.returned.wait(HOLD), "the blocked tool never returned"
    time.sleep(0.2)  # not a synchronisation: a window for a (wrong) late write to land in
    assert (tmp_path / "t.jsonl").read_bytes() == journal_before
    assert not any("late result" in str(m.content) for m in result.history)


def test_the_next_run_of_the_agent_is_not_held_by_a_tool_left_behind(
    tmp_path: Path, blocker: Blocker
) -> None:
    stuck_async, _ = blocking_tools("sleep", blocker)

    @tool
    async def quick(n: int) -> int:
        """Return n."""
        return n

    first, _ = run_one_call(stuck_async, tmp_path)
    assert first.stop_reason is StopReason.TIMEOUT
    second, _ = run_one_call(quick, tmp_path)
    assert second.stop_reason is StopReason.FINAL_ANSWER
    assert '"ok": true' in next(m.content for m in second.history if m.role == "tool")


def _hold_the_gil(seconds: float) -> Callable[[], None]:
    usleep = ctypes.PyDLL(None).usleep  # a PyDLL call keeps the GIL for its whole length
    usleep.argtypes = [ctypes.c_uint]
    return lambda: usleep(int(seconds * 1e6))


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_result_that_comes_after_a_gil_holding_c_call_is_discarded(
    tmp_path: Path, kind: str
) -> None:
    """Nothing in the process runs while a C call holds the GIL: the limit cannot stop it
    (docs/reliability.md says so). What it can do: end the run as soon as the call returns,
    and discard the result that came after the deadline."""
    hold = _hold_the_gil(1.2)

    @tool
    def c_call(n: int) -> str:
        """A tool stuck in one long C call."""
        hold()
        return "late result"

    @tool
    async def async_c_call(n: int) -> str:
        """An async tool stuck in one long C call."""
        hold()
        return "late result"

    chosen = c_call if kind == "sync" else async_c_call
    result, elapsed = run_one_call(chosen, tmp_path, limit=0.4)
    assert result.stop_reason is StopReason.TIMEOUT
    content = next(m.content for m in result.history if m.role == "tool")
    assert "late result" not in content and "at the time limit" in content
    assert elapsed < 1.2 + 2.0


def test_ctrl_c_while_a_tool_runs_under_a_limit_cancels_the_run(
    tmp_path: Path, blocker: Blocker
) -> None:
    @tool
    def interrupted(n: int) -> str:
        """Ctrl-C arrives while this tool runs."""
        ctrl_c()
        blocker.release.wait(HOLD)
        blocker.returned.set()
        return "late result"

    result, elapsed = run_one_call(interrupted, tmp_path, limit=60.0)
    assert not blocker.returned.is_set()
    assert result.stop_reason is StopReason.CANCELLED
    assert elapsed < 5.0
    assert read_journal(tmp_path / "t.jsonl")[-1]["type"] == "stop"


def _blocking_model(blocker: Blocker, *, interrupt: bool) -> FunctionModel:
    def reply(request: ModelRequest) -> ModelTurn:
        if interrupt:
            ctrl_c()
        blocker.release.wait(HOLD)
        blocker.returned.set()
        return ModelTurn(text="late answer")

    return FunctionModel(reply)


@pytest.mark.parametrize("interrupt", [False, True], ids=["time-limit", "ctrl-c"])
def test_a_model_call_that_blocks_cannot_hold_the_run(
    tmp_path: Path, blocker: Blocker, interrupt: bool
) -> None:
    """A model adapter that ignores the time left (an HTTP adapter keeps to it itself) is
    given up on ``MODEL_GRACE`` after the limit, or at once on Ctrl-C; its answer, late, is
    discarded."""
    model = _blocking_model(blocker, interrupt=interrupt)
    started = time.monotonic()
    with Journal(tmp_path / "t.jsonl") as journal:
        limits = Limits(max_seconds=LIMIT if not interrupt else 60.0)
        result = Agent(model, [], limits=limits, journal=journal).run("go")
    elapsed = time.monotonic() - started
    assert not blocker.returned.is_set()
    expected = StopReason.CANCELLED if interrupt else StopReason.TIMEOUT
    assert result.stop_reason is expected and result.answer is None
    assert elapsed < LIMIT + MODEL_GRACE + 2.0
    before = (tmp_path / "t.jsonl").read_bytes()
    assert read_journal(tmp_path / "t.jsonl")[-1]["type"] == "stop"
    blocker.free()
    assert blocker.returned.wait(HOLD)
    time.sleep(0.2)  # not a synchronisation: a window for a (wrong) late write to land in
    assert (tmp_path / "t.jsonl").read_bytes() == before


def test_ctrl_c_at_the_approvers_question_cancels_the_run(tmp_path: Path, blocker: Blocker) -> None:
    """The run's thread asks the approver (a terminal's prompt, in the CLI); the Ctrl-C goes
    to the caller's thread, which must not wait for an answer that may never come."""

    @tool
    def write(n: int) -> str:
        """A tool that needs approval."""
        return "written"

    def approve(call: object, chosen: Tool) -> bool:
        ctrl_c()
        blocker.release.wait(HOLD)
        blocker.returned.set()
        return True

    turns = [ModelTurn(tool_calls=(ToolCall(id="c1", name="write", arguments='{"n": 1}'),))]
    model = ScriptedModel([*turns, ModelTurn(text="done")])
    started = time.monotonic()
    with Journal(tmp_path / "t.jsonl") as journal:
        agent = Agent(model, [write], limits=Limits(max_seconds=60.0), journal=journal,
                      approve=approve)  # fmt: skip
        result = agent.run("go")
    assert not blocker.returned.is_set()
    assert result.stop_reason is StopReason.CANCELLED
    assert "approval of write" in (result.error or "")
    assert time.monotonic() - started < 5.0
    tool_messages = [m for m in result.history if m.role == "tool"]
    assert len(tool_messages) == 1 and "not executed" in str(tool_messages[0].content)
    assert read_journal(tmp_path / "t.jsonl")[-1]["type"] == "stop"
