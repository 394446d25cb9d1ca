"""``reactloop eval --resume`` continues the episodes a Ctrl-C cancelled: the eval sent SIGINT
with episodes held at a model call, then resumed. A cancelled episode's journal goes on (a
``resume`` event, one final ``stop``), the calls the cancel left unrun run then, no step the
journal recorded is asked of the server again (only the call in flight at the Ctrl-C),
and the results are an uninterrupted eval's. A cancelled episode with a workspace keeps it,
and continues there."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from reactloop import FunctionModel, Model, ModelRequest, ModelTurn, ToolCall, read_journal
from reactloop.eval import EpisodeSpec, Resumed, Rung, load_suite, run_episode
from reactloop.eval.run.episode import CancelScope
from reactloop.eval.run.oracle import OracleFactory, plan

sys.path.insert(0, str(Path(__file__).parent))
from test_eval_resume_journal import (
    CLI,
    TASKS,
    WRITE_TASK,
    SteppedServer,
    assert_same_results,
    eval_args,
    kinds,
    records,
    run_cli,
    stepped,
    steps_of,
    trace_of,
    turns,
    uninterrupted,
)

__all__ = ["stepped"]  # the fixture, used by name


def test_a_ctrl_c_ed_eval_continues_its_cancelled_episodes(
    tmp_path: Path, stepped: SteppedServer
) -> None:
    held = [n for n in range(len(TASKS)) if len(plan(TASKS[n].task)) >= 2]
    assert len(held) >= 3
    stepped.hold = {n: 2 for n in held}  # each waits at its second step, a tool call's
    out = tmp_path / "out"
    args = eval_args(stepped.server.base_url, out, "--limit", "7", "--concurrency", "7")
    child = subprocess.Popen([sys.executable, "-c", CLI, *args], stderr=subprocess.PIPE, text=True)
    try:
        stepped.wait_held(len(held))
        os.kill(child.pid, signal.SIGINT)
    finally:
        stepped.released.set()  # the calls in flight come back; their tools do not run
        _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    cancelled, recorded = [], {}
    for n in range(len(TASKS)):
        started = list((out / "traces").glob(f"*__native__{TASKS[n].id}__0.jsonl"))
        if n not in records(out) and started:  # (one the Ctrl-C came before runs afresh)
            events = read_journal(trace_of(out, n))
            assert events[-1]["stop_reason"] == "cancelled"
            cancelled.append(n)
            recorded[n] = turns(trace_of(out, n))
    assert set(held) <= set(cancelled)
    first = stepped.steps_asked()

    resumed = run_cli([*args, "--resume"])
    line = f"resume: {len(cancelled)} episodes continued from their journals, 0 started again"
    assert line in resumed.stderr
    second = stepped.steps_asked()
    for n in cancelled:  # only the call in flight at the Ctrl-C (if any) was made again
        asked = list(range(1, recorded[n] + 1))
        assert first.get(n, []) in (asked, [*asked, recorded[n] + 1])
        assert second[n] == list(range(recorded[n] + 1, steps_of(n) + 1))
        events = read_journal(trace_of(out, n))
        assert kinds(trace_of(out, n)).count("resume") == 1
        assert [e["stop_reason"] for e in events if e["type"] == "stop"][-1] == "final_answer"
        assert records(out)[n]["resumed_after"] == "cancelled"
        ran = [e["result"]["call_id"] for e in events if e["type"] == "tool_result"
               and e["result"]["executed"]]  # fmt: skip
        assert len(ran) == len(set(ran)) == steps_of(n) - 1  # each call ran once
    assert_same_results(records(out), uninterrupted(stepped.server.base_url, tmp_path / "w", 7))


def writing_model(scope: CancelScope) -> Model:
    """Step 1 writes ``answer.txt``; step 2 (its call in flight when the scope is cancelled,
    as by a Ctrl-C) reads it back; step 3 answers."""

    def reply(request: ModelRequest) -> ModelTurn:
        step = 1 + sum(m.role == "assistant" for m in request.messages)
        if step == 1:
            arguments = json.dumps({"path": "answer.txt", "content": "42\n"})
            return ModelTurn(
                tool_calls=(ToolCall(id="w1", name="write_file", arguments=arguments),)
            )
        if step == 2:
            scope.cancel()
            arguments = json.dumps({"path": "answer.txt"})
            return ModelTurn(tool_calls=(ToolCall(id="r1", name="read_file", arguments=arguments),))
        return ModelTurn(text="Done.")

    return FunctionModel(reply, name="writer")


def test_a_cancelled_workspace_episode_keeps_its_workspace_and_continues(tmp_path: Path) -> None:
    suite = tmp_path / "write.jsonl"
    suite.write_text(json.dumps(WRITE_TASK) + "\n")
    (task,) = load_suite(str(suite))
    scope = CancelScope()
    rung = Rung(label="w", spec="writer", factory=lambda spec: writing_model(scope))
    spec = EpisodeSpec(suite=str(suite), task=task, rung=rung, protocol="native", repeat=0)
    trace = tmp_path / "episode.jsonl"
    assert run_episode(spec, trace, scope) is None  # cancelled: not recorded
    events = read_journal(trace)
    assert events[-1]["stop_reason"] == "cancelled"
    (result,) = [
        e["result"] for e in events if e["type"] == "tool_result" and e["result"]["call_id"] == "r1"
    ]
    assert not result["executed"]
    workspace = Path(events[0]["config"]["workspace"])
    assert (workspace / "answer.txt").read_text() == "42\n"  # kept for --resume

    rung = dataclasses.replace(rung, factory=lambda spec: writing_model(CancelScope()))
    again = run_episode(dataclasses.replace(spec, rung=rung, continue_journal=True), trace)
    assert again is not None and again.status == "passed"
    assert again.resumed == Resumed(step=2, after="cancelled")
    events = read_journal(trace)
    reads = [e for e in events if e["type"] == "tool_result" and e["result"]["call_id"] == "r1"]
    assert [r["result"]["executed"] for r in reads] == [False, True]  # run on resume, once
    assert kinds(trace).count("resume") == 1 and kinds(trace).count("stop") == 2
    assert not workspace.exists()  # removed once the episode is recorded


def test_a_cancelled_oracle_episode_continues_to_the_uninterrupted_result(tmp_path: Path) -> None:
    scope = CancelScope()
    oracle = OracleFactory()

    def cancelling(spec: EpisodeSpec) -> Model:
        inner = oracle(spec)

        def reply(request: ModelRequest) -> ModelTurn:
            if any(m.role == "assistant" for m in request.messages):
                scope.cancel()  # Ctrl-C while the second step's call is in flight
            return inner.complete(request)

        return FunctionModel(reply, name="oracle")

    rung = Rung(label="o", spec="oracle", factory=cancelling)
    spec = EpisodeSpec(suite="arithmetic", task=TASKS[0], rung=rung, protocol="native", repeat=0)
    want = run_episode(
        dataclasses.replace(spec, rung=Rung(label="o", spec="oracle", factory=OracleFactory())),
        tmp_path / "whole.jsonl",
    )
    trace = tmp_path / "episode.jsonl"
    assert run_episode(spec, trace, scope) is None
    assert read_journal(trace)[-1]["stop_reason"] == "cancelled"
    again = run_episode(dataclasses.replace(spec, continue_journal=True), trace)
    assert again is not None and want is not None
    assert again.status == "passed" and again.resumed is not None
    assert again.resumed.after == "cancelled"
    assert again.restarted is None and kinds(trace).count("resume") == 1
    assert again.run is not None and want.run is not None
    assert again.run.answer == want.run.answer and again.run.called == want.run.called
    assert not (tmp_path / "episode.jsonl.restarted-1").exists()
