"""Errored is not failed, and --resume retries only errored and unrecorded episodes; an eval
killed with SIGKILL resumes without losing or repeating an episode."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, error_reply
from reactloop.testing.openai_replies import json_reply

TASKS = tuple(load_suite("arithmetic")[:3])


def test_errored_episodes_are_apart_from_failed_and_resume_retries_only_them(
    tmp_path: Path,
) -> None:
    broken = {TASKS[1].task}

    def respond(request: RecordedRequest) -> Reply:
        task = request.json["messages"][-1]["content"]
        if task in broken:
            return error_reply(503, {"error": {"message": "overloaded"}})
        answer = TASKS[0].expected if task == TASKS[0].task else -1  # TASKS[2] fails
        return json_reply(completion(f"The total is {answer}.", model="served-name"))

    with FakeOpenAIServer(responder=respond) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url, max_retries=0)
        config = EvalConfig(
            suite="arithmetic",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            tasks=TASKS,
            fsync=False,
        )
        first = run_eval(config)
        status = {r.task_id: r.status for r in first.records}
        assert status == {"arith-01": "passed", "arith-02": "errored", "arith-03": "failed"}
        errored = next(r for r in first.records if r.errored)
        assert errored.run is not None and errored.run.stop_reason == "model_error"
        assert "overloaded" in (errored.error or "")
        assert first.records[0].run is not None
        assert first.records[0].run.server_model == "served-name"
        report = (tmp_path / "out" / "report.md").read_text()
        assert "## Errored episodes" in report and "fake/native/arith-02/0" in report
        broken.clear()
        calls_before = len(server.requests)
        second = run_eval(EvalConfig(**{**config.__dict__, "resume": True}))
        assert (second.ran, second.skipped) == (1, 2)
        assert [
            json.loads(r.body)["messages"][-1]["content"] for r in server.requests[calls_before:]
        ] == [TASKS[1].task]
    status = {r.task_id: r.status for r in second.records}
    assert status == {"arith-01": "passed", "arith-02": "failed", "arith-03": "failed"}


CHILD = """
import sys, threading
from pathlib import Path
from reactloop import FunctionModel
from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory
from reactloop.eval.run.oracle import OracleFactory

oracle = OracleFactory()
started = 0
lock = threading.Lock()

def factory(spec):
    global started
    with lock:
        started += 1
        block, first = started > 9, started == 10
    if first:  # one line from one thread: two printing at once would interleave
        print("blocked", flush=True)
    if block:
        threading.Event().wait()
    return oracle(spec)

rung = Rung(label="o", spec="oracle", factory=factory)
run_eval(EvalConfig(suite="arithmetic", rungs=(rung,), out=Path(sys.argv[1]), repeats=2,
                    tasks=tuple(load_suite("arithmetic")[:8]), concurrency=3))
"""


def test_resume_after_sigkill_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "blocked\n"  # 9 episodes started, the 10th hangs
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    episodes = out / "episodes"
    before = {p.name: p.read_bytes() for p in episodes.glob("*.json")}
    assert 1 <= len(before) <= 9
    for data in before.values():
        assert json.loads(data)["status"] == "passed"
    resumed = run_eval(
        EvalConfig(
            suite="arithmetic",
            rungs=(Rung(label="o", spec="oracle", factory=OracleFactory()),),
            out=out,
            repeats=2,
            tasks=tuple(load_suite("arithmetic")[:8]),
            resume=True,
            fsync=False,
        )
    )
    assert resumed.completed and resumed.skipped == len(before)
    assert resumed.ran == 16 - len(before)
    keys = [r.key for r in resumed.records]
    assert len(keys) == len(set(keys)) == 16
    assert all(r.passed for r in resumed.records)
    files = sorted(p.name for p in episodes.iterdir())
    assert len(files) == 16 and not [f for f in files if f.endswith(".tmp")]
    for name, data in before.items():
        assert (episodes / name).read_bytes() == data


CLI_CHILD = """
import sys
sys.argv = ["reactloop", "eval", *sys.argv[1:]]
from reactloop.cli.eval import eval_command
eval_command(sys.argv[2:], prog_name="reactloop eval")
"""


def test_ctrl_c_on_the_command_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    arrived, release = threading.Event(), threading.Event()

    def respond(request: RecordedRequest) -> Reply:
        arrived.set()
        release.wait(timeout=30)
        return json_reply(completion("The total is 0."))

    out = tmp_path / "out"
    with FakeOpenAIServer(responder=respond) as server:
        args = [
            "--suite",
            "arithmetic",
            "--model",
            "vllm:fake",
            "--base-url",
            server.base_url,
            "--repeats",
            "1",
            "--concurrency",
            "1",
            "--out",
            str(out),
        ]
        child = subprocess.Popen(
            [sys.executable, "-c", CLI_CHILD, *args], stderr=subprocess.PIPE, text=True
        )
        assert arrived.wait(timeout=60)
        child.send_signal(signal.SIGINT)
        release.set()
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    recorded = len(list((out / "episodes").glob("*.json")))
    assert recorded < 30
    assert f"interrupted: {recorded} episodes recorded in {out}" in stderr
    assert "resume with: reactloop eval --suite arithmetic" in stderr
    assert stderr.rstrip().endswith("--resume") and "Traceback" not in stderr


def test_a_history_that_outgrows_the_context_is_a_failure_not_an_error(tmp_path: Path) -> None:
    overflow = {
        "error": {
            "code": "context_length_exceeded",
            "message": "This model's maximum context length is 4096 tokens.",
        }
    }

    def respond(request: RecordedRequest) -> Reply:
        return error_reply(400, overflow)

    with FakeOpenAIServer(responder=respond) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url, max_retries=0)
        config = EvalConfig(
            suite="arithmetic",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            tasks=TASKS[:1],
            fsync=False,
            report=False,
        )
        (record,) = run_eval(config).records
    assert record.run is not None
    assert (record.status, record.run.stop_reason) == ("failed", "model_error")
    assert "maximum context length" in (record.error or "")
