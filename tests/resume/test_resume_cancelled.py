"""A run stopped ``cancelled`` (Ctrl-C) resumes: ``reactloop run`` sent SIGINT while a tool
runs and while a model call is in flight, then ``reactloop resume`` finishes it, in the same
journal, with one final ``stop``. The call interrupted while it ran keeps its recorded result
(it is never run again); the calls the cancel left unrun run on resume, once; the model call
in flight at the cancel is simply made again. In the library: the calls a cancel stopped
before they ran are open again and counted once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, read_journal, tool
from reactloop.resume.resume_run import rebuild
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, tool_call
from reactloop.testing.openai_replies import json_reply

LIMITS = Limits(max_model_calls=10, max_tool_calls=10, max_seconds=None)


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "x"}
    return subprocess.Popen(
        [sys.executable, "-m", "reactloop", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
    )


def reactloop(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    process = start(*args, cwd=cwd)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Until ``condition`` holds (the journal or the workspace reached a point); the process
    ending first fails the test with its stderr."""
    deadline = time.monotonic() + 60
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the run ended first: {process.communicate()[1]}")
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.01)  # polling a file: nothing to wait on instead


def journal_has(trace: Path, kind: str, count: int = 1) -> Callable[[], bool]:
    def reached() -> bool:
        if not trace.exists():
            return False
        lines = trace.read_bytes().split(b"\n")
        return sum(f'"type":"{kind}"'.encode() in line for line in lines) >= count

    return reached


def bash(command: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "bash", "arguments": {"command": command}}


def test_a_run_ctrl_c_ed_while_a_tool_ran_resumes_to_one_stop(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = tmp_path / "script.json"
    turns: list[Any] = [
        {
            "tool_calls": [
                bash("echo one >> count.txt; sleep 120", "c_one"),
                bash("echo two >> count.txt", "c_two"),
            ]
        },
        {"tool_calls": [bash("echo three >> count.txt", "c_three")]},
        {"content": "counted"},
    ]
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    common = ["--tools", "bash", "--workspace", str(workspace)]
    run = start(
        "run", "count", "--model", f"scripted:{script.name}", *common, "--trace", str(trace),
        cwd=tmp_path,
    )  # fmt: skip
    count = workspace / "count.txt"
    wait_for(lambda: count.exists() and count.read_text() == "one\n", run)  # c_one sleeps now
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    events = read_journal(trace)
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "cancelled"
    results = {e["result"]["call_id"]: e["result"] for e in events if e["type"] == "tool_result"}
    assert "interrupted while it ran" in results["c_one"]["error"]
    assert results["c_two"]["error"] == "not executed: cancelled"

    resumed = reactloop("resume", str(trace), *common, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "counted"
    assert count.read_text() == "one\ntwo\nthree\n"  # each once: c_one was not run again
    events = read_journal(trace)
    kinds = [e["type"] for e in events]
    assert kinds.count("resume") == 1 and kinds[-1] == "stop"
    assert [e["stop_reason"] for e in events if e["type"] == "stop"] == [
        "cancelled",
        "final_answer",
    ]
    (resume,) = [e for e in events if e["type"] == "resume"]
    assert resume["why"] == "cancelled"
    assert [(c["call_id"], c["state"]) for c in resume["calls"]] == [
        ("c_one", "done"),
        ("c_two", "not_started"),
    ]
    starts = [e["call_id"] for e in events if e["type"] == "tool_start"]
    assert starts == ["c_one", "c_two", "c_three"]
    assert events[-1]["tool_calls"] == 3


class HeldServer:
    """Step 1 calls bash (``echo one >> count.txt``); the first request of step 2 waits until
    ``released``; step 2 answers. ``asked`` counts the requests of each step."""

    def __init__(self) -> None:
        self.asked = {1: 0, 2: 0}
        self.held = threading.Event()
        self.released = threading.Event()
        self.server = FakeOpenAIServer(responder=self.respond)

    def respond(self, request: RecordedRequest) -> Reply:
        step = 1 + sum(m["role"] == "assistant" for m in request.json["messages"])
        self.asked[step] += 1
        if step == 1:
            call = tool_call("bash", {"command": "echo one >> count.txt"}, id="c1")
            return json_reply(completion(tool_calls=[call]))
        if not self.held.is_set():
            self.held.set()
            self.released.wait(timeout=120)
        return json_reply(completion("counted"))


def test_a_run_ctrl_c_ed_during_a_model_call_makes_that_call_again(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    trace = tmp_path / "run.jsonl"
    held = HeldServer()
    with held.server:
        common = ["--model", "vllm:fake", "--base-url", held.server.base_url]
        run = start(
            "run", "count", *common, "--tools", "bash", "--workspace", str(workspace),
            "--trace", str(trace), cwd=tmp_path,
        )  # fmt: skip
        try:
            assert held.held.wait(timeout=60)  # step 2's request is in flight
            run.send_signal(signal.SIGINT)
            _, err = run.communicate(timeout=60)
        finally:
            held.released.set()
            if run.poll() is None:
                run.kill()
        assert run.returncode == 130, err
        events = read_journal(trace)
        assert events[-1]["stop_reason"] == "cancelled"
        assert [e["type"] for e in events].count("request") == 2

        given = ["--base-url", held.server.base_url, "--json"]
        given += ["--tools", "bash", "--workspace", str(workspace)]
        resumed = reactloop("resume", str(trace), *given, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "counted"
    assert held.asked == {1: 1, 2: 2}  # only the call in flight was made again
    assert (workspace / "count.txt").read_text() == "one\n"
    events = read_journal(trace)
    kinds = [e["type"] for e in events]
    assert kinds.count("resume") == 1 and kinds.count("turn") == 2 and kinds[-1] == "stop"
    assert [e["stop_reason"] for e in events if e["type"] == "stop"] == [
        "cancelled",
        "final_answer",
    ]
    assert events[-1]["model_calls"] == 2 and events[-1]["tool_calls"] == 1


class Cancelling:
    """``first`` cancels the run from inside itself (as a Ctrl-C would, between calls); each
    tool counts its runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.agent: Agent | None = None

        @tool
        def first() -> str:
            """The first call: it cancels the run."""
            self.runs.append("first")
            assert self.agent is not None
            self.agent.cancel()
            return "ran"

        @tool
        def second() -> str:
            """The second call."""
            self.runs.append("second")
            return "ran"

        @tool
        def third() -> str:
            """The third call."""
            self.runs.append("third")
            return "ran"

        self.tools = [first, second, third]


def test_calls_a_cancel_stopped_before_they_ran_run_once_on_resume(tmp_path: Path) -> None:
    turns: list[Any] = [
        {
            "tool_calls": [
                {"name": n, "arguments": {}, "id": n} for n in ("first", "second", "third")
            ]
        },
        {"content": "all ran"},
    ]
    tools = Cancelling()
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), tools.tools, journal=journal, limits=LIMITS)
        tools.agent = agent
        assert agent.run("go").stop_reason == "cancelled"
    results = {e["result"]["call_id"]: e["result"] for e in read_journal(trace) if "result" in e}
    assert results["second"]["error"] == "cancelled: the run was cancelled before it ran"
    assert results["third"]["error"] == "not executed: cancelled"
    state = rebuild(read_journal(trace))
    assert [(c.call.id, c.state) for c in state.calls] == [
        ("first", "done"),
        ("second", "not_started"),
        ("third", "not_started"),
    ]
    assert state.counts.tool_calls == 1  # second counts when it runs

    tools.agent = None  # the resumed run is not cancelled again
    again = Cancelling()
    resumed = Agent(ScriptedModel(turns), again.tools, limits=LIMITS).resume(trace)
    assert resumed.stop_reason == "final_answer" and resumed.answer == "all ran"
    assert again.runs == ["second", "third"] and resumed.tool_calls == 3
    assert read_journal(trace)[-1]["tool_calls"] == 3


def test_a_call_closed_by_the_cancel_after_its_start_is_uncertain(tmp_path: Path) -> None:
    """The Ctrl-C came between the tool's return and its result: closed ``not executed:
    cancelled`` after its ``tool_start``, it may have run."""
    turns: list[Any] = [
        {"tool_calls": [{"name": "second", "arguments": {}, "id": "s1"}]},
        {"content": "ok"},
    ]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns), Cancelling().tools, journal=journal, limits=LIMITS).run("go")
    events = read_journal(trace)
    start = next(i for i, e in enumerate(events) if e["type"] == "tool_start")
    cut = events[: start + 1]
    closed = {
        "type": "tool_result",
        "t": cut[start]["t"],
        "step": cut[start]["step"],
        "content": json.dumps({"ok": False, "error": "not executed: cancelled"}),
        "result": {"call_id": "s1", "name": "second", "ok": False, "executed": False},
    }
    stop = {"type": "stop", "t": cut[start]["t"], "step": 1, "stop_reason": "cancelled"}
    state = rebuild([*cut, closed, stop])
    assert [(c.call.id, c.state) for c in state.calls] == [("s1", "uncertain")]
    assert state.counts.tool_calls == 0  # counted again when it runs again, or is answered


def test_a_call_whose_approval_a_ctrl_c_ended_is_asked_again_on_resume(tmp_path: Path) -> None:
    turns: list[Any] = [
        {"tool_calls": [{"name": "second", "arguments": {}, "id": "s1"}]},
        {"content": "ok"},
    ]
    trace = tmp_path / "run.jsonl"

    def interrupted(call: Any, tool: Any) -> bool:
        raise KeyboardInterrupt  # Ctrl-C at the approval's question

    tools = Cancelling()
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), tools.tools, journal=journal, approve=interrupted)
        assert agent.run("go").stop_reason == "cancelled"
    assert tools.runs == []
    asked: list[str] = []

    def approve(call: Any, tool: Any) -> bool:
        asked.append(call.id)
        return True

    again = Cancelling()
    resumed = Agent(ScriptedModel(turns), again.tools, approve=approve).resume(trace)
    assert resumed.answer == "ok" and asked == ["s1"] and again.runs == ["second"]
    assert resumed.tool_calls == 1
