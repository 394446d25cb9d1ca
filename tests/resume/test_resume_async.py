"""``Agent.aresume``: ``resume`` for asyncio, the same resumed loop on a thread of its own (as
``arun`` is ``run``'s). A run awaiting approval goes on with the decisions given; a run
SIGKILLed mid-way (``resume_kill_child.py``) resumed by ``aresume`` ends as ``resume`` ends
it, journal and all; cancelling the awaiting task stops the run ``cancelled``, with its
``stop``; a journal that cannot be resumed raises as ``resume`` does, and stays as it was."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import resume_kill_child as child
from reactloop import Agent, Defer, Journal, ScriptedModel, tool
from reactloop.errors import UsageError
from reactloop.journal.writer import read_journal

VOLATILE = {"t", "seconds"}  # when each event came, how long each call took


class Sender:
    """A side-effect tool that records what it sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

        @tool
        def send(to: str) -> str:
            """Send the report (a side effect).

            Args:
                to: the recipient
            """
            self.sent.append(to)
            return f"sent to {to}"

        self.tool = send


def sends(*names: str) -> list[Any]:
    calls = [{"id": f"s_{n}", "name": "send", "arguments": {"to": n}} for n in names]
    return [{"tool_calls": calls}, "sent what I could"]


def test_a_run_awaiting_approval_goes_on_with_the_decisions_given(tmp_path: Path) -> None:
    trace = tmp_path / "waiting.jsonl"
    turns = sends("ana", "bo")
    first_sender = Sender()
    with Journal(trace) as journal:
        agent = Agent(
            ScriptedModel(turns), [first_sender.tool], journal=journal, approve=lambda c, t: Defer()
        )
        first = agent.run("send the reports")
    assert first.stop_reason == "awaiting_approval" and first_sender.sent == []
    assert [c.id for c in first.pending] == ["s_ana", "s_bo"]

    sender = Sender()
    later = asyncio.run(
        Agent(ScriptedModel(turns), [sender.tool]).aresume(
            trace, decisions={"s_ana": True, "s_bo": "not bo"}
        )
    )
    assert later.stop_reason == "final_answer" and later.answer == "sent what I could"
    assert sender.sent == ["ana"]  # the approved call ran, the denied one did not
    events = read_journal(trace)
    approvals = [
        (e["call_id"], e["decision"], e["reason"]) for e in events if e["type"] == "approval"
    ]
    assert approvals == [("s_ana", "approve", None), ("s_bo", "deny", "not bo")]
    results = {e["result"]["call_id"]: e["result"] for e in events if e["type"] == "tool_result"}
    assert results["s_ana"]["ok"] and "not bo" in results["s_bo"]["error"]
    assert [e["type"] for e in events].count("stop") == 2  # awaiting_approval, then the run's
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "final_answer"


def killed_run(tmp_path: Path, spec: str) -> Path:
    """A 30-step run SIGKILLed by itself at ``spec`` (``resume_kill_child.py``)."""
    trace, counter = tmp_path / "killed.jsonl", tmp_path / "counter.txt"
    command = [
        sys.executable, str(Path(child.__file__)), "run", str(trace), str(counter), spec,
        "0", "scripted", "", str(tmp_path / "out.json"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    return trace


def resumed_copy(killed: Path, folder: Path, *, use_async: bool) -> tuple[Any, list[str], Path]:
    """The killed journal copied into ``folder`` and resumed there, by ``aresume`` or
    ``resume``; the result, the tool runs of the resume, the journal."""
    folder.mkdir()
    trace = folder / killed.name
    shutil.copyfile(killed, trace)
    counter = folder / "counter.txt"
    agent = Agent(ScriptedModel(child.script()), child.tools(counter, child.Killer("none")))
    result = asyncio.run(agent.aresume(trace)) if use_async else agent.resume(trace)
    runs = counter.read_text().splitlines() if counter.exists() else []
    return result, runs, trace


def steady(value: Any, folder: Path) -> Any:
    """``value`` without what differs from one resume to the other (times, the folder)."""
    if isinstance(value, dict):
        return {k: steady(v, folder) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [steady(v, folder) for v in value]
    return value.replace(str(folder), "FOLDER") if isinstance(value, str) else value


@pytest.mark.parametrize("spec", ["tool:5:after", "write:40", "event:60"])
def test_a_killed_run_resumed_by_aresume_ends_as_resume_ends_it(tmp_path: Path, spec: str) -> None:
    killed = killed_run(tmp_path, spec)
    before = read_journal(killed)
    assert not any(e["type"] == "stop" for e in before)
    by_sync, sync_runs, sync_trace = resumed_copy(killed, tmp_path / "sync", use_async=False)
    by_async, async_runs, async_trace = resumed_copy(killed, tmp_path / "async", use_async=True)
    assert by_async.stop_reason == "final_answer" and by_async.answer == "done"
    assert async_runs == sync_runs and async_runs  # the same calls ran again, or not
    as_dicts = [
        steady(r.to_dict(), t.parent) for r, t in ((by_sync, sync_trace), (by_async, async_trace))
    ]
    assert as_dicts[0] == as_dicts[1]
    assert [m.to_dict() for m in by_async.history] == [m.to_dict() for m in by_sync.history]
    sync_events, async_events = read_journal(sync_trace), read_journal(async_trace)
    assert steady(async_events, async_trace.parent) == steady(sync_events, sync_trace.parent)
    assert [e["type"] for e in async_events].count("resume") == 1
    assert async_events[-1]["type"] == "stop"
    assert [e["type"] for e in async_events].count("stop") == 1
    torn = [t.with_name(t.name + ".torn") for t in (sync_trace, async_trace)]
    assert [p.exists() for p in torn] == [spec.startswith("write")] * 2
    if spec.startswith("write"):
        assert torn[0].read_bytes() == torn[1].read_bytes()


def test_cancelling_aresume_stops_the_run_cancelled_with_its_stop(tmp_path: Path) -> None:
    trace = tmp_path / "waiting.jsonl"
    turns = [{"tool_calls": [{"id": "w1", "name": "wait", "arguments": {}}]}, "never"]
    entered, release = threading.Event(), threading.Event()

    @tool
    def wait() -> str:
        """Wait until released (a side effect: it waits for approval first)."""
        entered.set()
        release.wait(60)
        return "released"

    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), [wait], journal=journal, approve=lambda c, t: Defer())
        assert agent.run("wait").stop_reason == "awaiting_approval"

    async def cancel_while_the_tool_runs() -> None:
        resumed = Agent(ScriptedModel(turns), [wait])
        task = asyncio.ensure_future(resumed.aresume(trace, decisions={"w1": True}))
        ran = await asyncio.get_running_loop().run_in_executor(None, entered.wait, 30)
        assert ran, "the approved call never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not resumed.cancel_requested

    try:
        asyncio.run(cancel_while_the_tool_runs())
    finally:
        release.set()
    events = read_journal(trace)
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "cancelled"
    assert [e["type"] for e in events].count("resume") == 1


def test_a_journal_that_cannot_be_resumed_raises_and_stays_as_it_was(tmp_path: Path) -> None:
    trace = tmp_path / "done.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(["hello"]), [], journal=journal, protocol="native").run("hi")
    before = trace.read_bytes()
    agent = Agent(ScriptedModel(["hello"]), [], protocol="native")
    with pytest.raises(UsageError, match="finished"):
        asyncio.run(agent.aresume(trace))
    assert trace.read_bytes() == before
    assert not agent.cancel_requested  # its cancel event was dropped with the run
