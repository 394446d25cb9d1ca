"""``reactloop eval --resume`` continues an interrupted episode from its journal: the eval
SIGKILLed with episodes in flight, a worker SIGKILLed, an episode stalled. A continued
episode's journal is one run (a ``resume`` event, one final ``stop``), the server is never
asked again for a step the journal recorded, and the results are an uninterrupted eval's; an
episode whose journal cannot go on starts again, its old journal kept beside the new one."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactloop import Limits, read_journal
from reactloop.eval import EpisodeSpec, EvalConfig, Rung, load_suite, run_episode, run_eval
from reactloop.eval.run.oracle import OracleFactory, plan, total
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, tool_call
from reactloop.testing.openai_replies import json_reply

TASKS = load_suite("arithmetic")[:7]
INDEX = {task.task: n for n, task in enumerate(TASKS)}
COMPARED = ("status", "answer", "stop_reason", "model_calls", "tool_calls", "usage", "health")
CLI = """
import sys
from reactloop.cli.eval import eval_command
eval_command(sys.argv[1:], prog_name="reactloop eval")
"""


class SteppedServer:
    """Solves arithmetic tasks one calculator call a step (the oracle's plan), counting the
    requests per (task, step); ``hold`` maps a task's index to the step whose first request
    waits until ``release`` (``held`` counts the requests waiting)."""

    def __init__(self, hold: dict[int, int]) -> None:
        self.hold = dict(hold)
        self.asked: dict[tuple[int, int], int] = defaultdict(int)
        self.lock = threading.Condition()
        self.held = 0
        self.released = threading.Event()
        self.server = FakeOpenAIServer(responder=self.respond)

    def respond(self, request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        task = next(m["content"] for m in messages if m["role"] == "user")
        step = 1 + sum(m["role"] == "assistant" for m in messages)
        index = INDEX[task]
        with self.lock:
            self.asked[index, step] += 1
            wait = self.hold.get(index) == step and not self.released.is_set()
            if wait:
                del self.hold[index]
                self.held += 1
                self.lock.notify_all()
        if wait:
            self.released.wait(timeout=120)
        steps = plan(task)
        if step <= len(steps):
            call = tool_call("calculator", {"expression": steps[step - 1]}, id=f"call_{step}")
            return json_reply(completion(tool_calls=[call]))
        return json_reply(completion(f"The total is {total(task)}."))

    def wait_held(self, count: int) -> None:
        with self.lock:
            assert self.lock.wait_for(lambda: self.held >= count, timeout=120), self.held

    def steps_asked(self) -> dict[int, list[int]]:
        """Each task's steps asked for since the last call, a step as often as it was asked
        (sorted); the counts start again from nothing."""
        with self.lock:
            found: dict[int, list[int]] = defaultdict(list)
            for (index, step), times in sorted(self.asked.items()):
                found[index] += [step] * times
            self.asked.clear()
            return found


@pytest.fixture
def stepped() -> Iterator[SteppedServer]:
    holder = SteppedServer({})
    with holder.server:
        yield holder
        holder.released.set()


def eval_args(base_url: str, out: Path, *more: str) -> list[str]:
    args = ["--suite", "arithmetic", "--model", "vllm:fake", "--base-url", base_url]
    return [*args, "--repeats", "1", "--out", str(out), "--no-progress", *more]


def run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done


def records(out: Path) -> dict[int, dict[str, Any]]:
    found = {}
    for path in (out / "episodes").glob("*.json"):
        record = json.loads(path.read_text())
        found[int(record["task_id"].split("-")[1]) - 1] = record
    return found


def trace_of(out: Path, index: int) -> Path:
    (path,) = (out / "traces").glob(f"*__native__{TASKS[index].id}__0.jsonl")
    return path


def kinds(path: Path) -> list[str]:
    return [str(event["type"]) for event in read_journal(path)]


def turns(path: Path) -> int:
    return kinds(path).count("turn")


def steps_of(index: int) -> int:
    return len(plan(TASKS[index].task)) + 1


def uninterrupted(base_url: str, out: Path, limit: int) -> dict[int, dict[str, Any]]:
    run_cli(eval_args(base_url, out, "--limit", str(limit)))
    return records(out)


def assert_same_results(got: dict[int, dict[str, Any]], want: dict[int, dict[str, Any]]) -> None:
    assert sorted(got) == sorted(want)
    for index, record in want.items():
        assert {f: got[index][f] for f in COMPARED} == {f: record[f] for f in COMPARED}
        assert got[index]["called"] == record["called"]
        assert len(got[index]["steps"]) == len(record["steps"])


def resume_damaged(
    out: Path, resume_args: list[str], stepped: SteppedServer, recorded: dict[int, int]
) -> None:
    """Damage episode 5's journal and remove episode 6's, resume, and check: 2-4 continue
    from the step their journals reached, 5 and 6 start again (5's old journal kept aside)."""
    damaged = trace_of(out, 5).read_bytes().splitlines(keepends=True)
    damaged[1] = b'{"type": "run_start", broken\n'
    trace_of(out, 5).write_bytes(b"".join(damaged))
    trace_of(out, 6).unlink()

    resumed = run_cli(resume_args)
    assert "resume: 3 episodes continued from their journals, 1 started again" in resumed.stderr
    second = stepped.steps_asked()
    for n in (2, 3, 4):
        assert second[n] == list(range(recorded[n] + 1, steps_of(n) + 1))
        assert kinds(trace_of(out, n)).count("resume") == 1
        assert kinds(trace_of(out, n)).count("stop") == 1
        assert kinds(trace_of(out, n))[-1] == "stop"
        assert records(out)[n]["resumed_from_step"] == recorded[n]
    for n in (5, 6):
        assert second[n] == list(range(1, steps_of(n) + 1))
        assert "resume" not in kinds(trace_of(out, n))
    aside = out / "traces" / (trace_of(out, 5).name + ".restarted-1")
    assert aside.read_bytes() == b"".join(damaged)
    assert records(out)[5]["restarted"]["journal"] == f"traces/{aside.name}"
    assert "2: not JSON" in records(out)[5]["restarted"]["why"]
    assert "restarted" not in records(out)[6] and "resumed_from_step" not in records(out)[6]
    assert [p.name for p in (out / "traces").iterdir() if ".restarted-" in p.name] == [aside.name]


def test_a_killed_eval_continues_its_episodes_from_their_journals(
    tmp_path: Path, stepped: SteppedServer
) -> None:
    # tasks 0 and 1 finish; 2..6 are in flight, each held at a step: 2 before any turn,
    # 4 at its last calculator step; 5's journal is then damaged and 6's removed
    stepped.hold = {2: 1, 3: 2, 4: 4, 5: 2, 6: 3}
    out = tmp_path / "out"
    args = eval_args(stepped.server.base_url, out, "--limit", "7", "--concurrency", "5")
    child = subprocess.Popen([sys.executable, "-c", CLI, *args], stderr=subprocess.DEVNULL)
    try:
        stepped.wait_held(5)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    stepped.released.set()
    first = stepped.steps_asked()
    assert sorted(records(out)) == [0, 1]
    recorded = {n: turns(trace_of(out, n)) for n in range(2, 7)}
    assert recorded == {2: 0, 3: 1, 4: 3, 5: 1, 6: 2}
    for n in range(2, 7):
        assert first[n] == list(range(1, recorded[n] + 2))  # the last one in flight
    resume_damaged(out, [*args, "--resume"], stepped, recorded)

    want = uninterrupted(stepped.server.base_url, tmp_path / "whole", 7)
    assert_same_results(records(out), want)
    assert all(r["status"] == "passed" for r in want.values())


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        pid = _parent(pid)
        if pid == ancestor:
            return True
    return False


def _worker_with(eval_pid: int, traces: Path) -> int:
    """The pid of the eval's worker process (a child of its forkserver) that has a journal in
    ``traces`` open."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if not _descends_from(int(entry.name), eval_pid):
                continue
            for fd in (entry / "fd").iterdir():
                if Path(os.readlink(fd)).parent == traces:
                    return int(entry.name)
        except (OSError, ValueError, IndexError):
            continue
    raise AssertionError("no worker holds a journal open")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds the worker through /proc")
def test_the_episodes_of_a_killed_worker_continue_on_resume(
    tmp_path: Path, stepped: SteppedServer
) -> None:
    stepped.hold = {n: 2 for n in range(4)}
    out = tmp_path / "out"
    args = eval_args(stepped.server.base_url, out, "--limit", "6", "--concurrency", "4")
    child = subprocess.Popen(
        [sys.executable, "-c", CLI, *args, "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
    )
    stepped.wait_held(4)  # two episodes in each worker, each held at its second step
    os.kill(_worker_with(child.pid, out / "traces"), signal.SIGKILL)
    assert child.stderr is not None
    stepped.released.set()
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr
    died = [n for n, r in records(out).items() if r.get("reason") == "worker_died"]
    assert len(died) == 2 and all(turns(trace_of(out, n)) == 1 for n in died)
    stepped.steps_asked()

    resumed = run_cli([*args, "--workers", "2", "--resume"])
    assert "resume: 2 episodes continued from their journals, 0 started again" in resumed.stderr
    second = stepped.steps_asked()
    assert sorted(second) == sorted(died)
    for n in died:
        assert second[n] == list(range(2, steps_of(n) + 1))
        assert kinds(trace_of(out, n)).count("resume") == 1
        assert kinds(trace_of(out, n)).count("stop") == 1
    assert_same_results(records(out), uninterrupted(stepped.server.base_url, tmp_path / "w", 6))


def test_a_stalled_episode_continues_with_a_new_window(
    tmp_path: Path, stepped: SteppedServer
) -> None:
    stepped.hold = {1: 3}  # never released during the first eval: it stalls there
    rung = Rung(label="fake", spec="vllm:fake", base_url=stepped.server.base_url)
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=tuple(TASKS[:2]),
        episode_seconds=4.0,
        fsync=False,
        report=False,
    )
    first = run_eval(config)
    assert [r.reason for r in first.records] == [None, "stalled"]
    stepped.released.set()
    stepped.steps_asked()
    trace = trace_of(config.out, 1)
    assert kinds(trace)[-1] == "stop" and turns(trace) == 2

    again = run_eval(EvalConfig(**{**config.__dict__, "resume": True}))
    assert (again.continued, again.restarted) == (1, 0)
    assert stepped.steps_asked() == {1: list(range(3, steps_of(1) + 1))}
    (record,) = [r for r in again.records if r.task_id == TASKS[1].id]
    assert record.status == "passed" and record.resumed is not None
    assert record.resumed.after == "timeout"
    events = read_journal(trace)
    stops = [e["stop_reason"] for e in events if e["type"] == "stop"]
    assert stops == ["timeout", "final_answer"] and kinds(trace).count("resume") == 1


WRITE_TASK = {
    "id": "write",
    "task": "Write 42 into answer.txt.",
    "check": "command",
    "command": "grep -qx 42 answer.txt",
    "tools": ["files"],
}


class WritingServer:
    """Step 1 writes ``answer.txt`` (``write_file``); the first request of step 2 waits until
    ``released``; step 2 answers. ``writes`` counts the step-1 requests."""

    def __init__(self) -> None:
        self.writes = 0
        self.waiting = threading.Event()
        self.released = threading.Event()
        self.server = FakeOpenAIServer(responder=self.respond)

    def respond(self, request: RecordedRequest) -> Reply:
        if not any(m["role"] == "assistant" for m in request.json["messages"]):
            self.writes += 1
            arguments = {"path": "answer.txt", "content": "42\n"}
            return json_reply(completion(tool_calls=[tool_call("write_file", arguments)]))
        if not self.waiting.is_set():
            self.waiting.set()
            self.released.wait(timeout=120)
        return json_reply(completion("Done."))


@pytest.mark.parametrize("workspace_kept", [True, False])
def test_a_workspace_episode_continues_in_its_recorded_workspace(
    tmp_path: Path, workspace_kept: bool
) -> None:
    suite = tmp_path / "write.jsonl"
    suite.write_text(json.dumps(WRITE_TASK) + "\n")
    out = tmp_path / "out"
    writing = WritingServer()
    with writing.server:
        args = eval_args(writing.server.base_url, out)
        args[args.index("arithmetic")] = str(suite)
        child = subprocess.Popen([sys.executable, "-c", CLI, *args], stderr=subprocess.DEVNULL)
        try:
            assert writing.waiting.wait(timeout=120)  # step 1 wrote the file
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=60)
        writing.released.set()
        (trace,) = (out / "traces").glob("*.jsonl")
        workspace = Path(read_journal(trace)[0]["config"]["workspace"])
        assert (workspace / "answer.txt").read_text() == "42\n"
        if not workspace_kept:
            (workspace / "answer.txt").unlink()
            workspace.rmdir()
        resumed = run_cli([*args, "--resume"])
    (record,) = records_of(out)
    assert record["status"] == "passed"
    if workspace_kept:
        assert "1 episodes continued" in resumed.stderr and writing.writes == 1
        assert record["resumed_from_step"] == 1 and kinds(trace).count("resume") == 1
    else:
        assert "0 episodes continued" in resumed.stderr and writing.writes == 2
        assert "is gone" in record["restarted"]["why"]
        assert (out / "traces" / f"{trace.name}.restarted-1").is_file()
    assert not workspace.exists()  # the continued episode's workspace is removed as any


def records_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "episodes").glob("*.json"))]


@pytest.mark.parametrize("protocol", ["native", "text"])
def test_an_episode_cut_at_any_line_continues_to_the_uninterrupted_result(
    tmp_path: Path, protocol: str
) -> None:
    rung = Rung(label="o", spec="oracle", factory=OracleFactory(), protocols=(protocol,))
    spec = EpisodeSpec(
        suite="arithmetic", task=TASKS[2], rung=rung, protocol=protocol, repeat=0, limits=Limits()
    )
    wanted = run_episode(spec, tmp_path / "whole.jsonl")
    assert wanted is not None and wanted.status == "passed"
    want = wanted.to_dict()
    lines = (tmp_path / "whole.jsonl").read_bytes().splitlines(keepends=True)
    continued = 0
    for cut in range(1, len(lines) + 1):
        trace = tmp_path / f"cut-{cut}.jsonl"
        torn = lines[cut][: len(lines[cut]) // 2] if cut % 2 and cut < len(lines) else b""
        trace.write_bytes(b"".join(lines[:cut]) + torn)
        record = run_episode(dataclasses.replace(spec, continue_journal=True), trace)
        assert record is not None
        got = record.to_dict()
        assert {f: got[f] for f in COMPARED} == {f: want[f] for f in COMPARED}, cut
        assert (got["called"], len(got["steps"])) == (want["called"], len(want["steps"]))
        events = kinds(trace)
        assert events.count("stop") == 1 and events[-1] == "stop" and events.count("run_start") == 1
        if "resumed_from_step" in got:
            continued += 1
            assert events.count("resume") == 1
        else:  # nothing to go on from (no run_start yet), or already finished
            assert cut in (1, len(lines)) and got["restarted"]["journal"].endswith(".restarted-1")
    assert continued == len(lines) - 2


def test_on_ray_an_episode_whose_run_had_ended_starts_again_and_its_journal_is_kept(
    tmp_path: Path,
) -> None:
    ray = pytest.importorskip("ray")
    rung = Rung(label="o", spec="oracle", factory=OracleFactory())
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=tuple(TASKS[:1]),
        fsync=False,
        report=False,
    )
    run_eval(config)  # locally: then its record is lost, as when the eval is killed
    (record,) = records_of(config.out)
    (config.out / "episodes" / "o__native__arith-01__0.json").unlink()
    journal = (config.out / record["trace"]).read_bytes()
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        again = run_eval(EvalConfig(**{**config.__dict__, "backend": "ray", "resume": True}))
    finally:
        ray.shutdown()
    assert [r.status for r in again.records] == ["passed"]
    kept = config.out / f"{record['trace']}.restarted-1"
    assert kept.read_bytes() == journal  # its run had ended (final_answer): it starts again
    assert (config.out / record["trace"]).stat().st_size > 0


def test_a_stalled_workspace_episode_keeps_its_workspace_and_continues_there(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "write.jsonl"
    suite.write_text(json.dumps(WRITE_TASK) + "\n")
    writing = WritingServer()  # step 2 never answers during the first eval: it stalls there
    with writing.server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=writing.server.base_url)
        config = EvalConfig(
            suite=str(suite),
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            tasks=tuple(load_suite(str(suite))),
            episode_seconds=4.0,
            fsync=False,
            report=False,
        )
        (first,) = run_eval(config).records
        assert first.reason == "stalled" and first.trace is not None
        workspace = Path(read_journal(config.out / first.trace)[0]["config"]["workspace"])
        assert (workspace / "answer.txt").read_text() == "42\n"  # kept for --resume
        writing.released.set()
        (again,) = run_eval(EvalConfig(**{**config.__dict__, "resume": True})).records
    assert again.status == "passed" and again.resumed is not None and again.resumed.step == 1
    assert writing.writes == 1 and not workspace.exists()


def test_a_journal_of_another_task_or_model_is_not_continued(tmp_path: Path) -> None:
    rung = Rung(label="o", spec="oracle", factory=OracleFactory())
    spec = EpisodeSpec(suite="arithmetic", task=TASKS[0], rung=rung, protocol="native", repeat=0)
    cut = tmp_path / "cut.jsonl"
    run_episode(spec, cut)
    lines = cut.read_bytes().splitlines(keepends=True)
    changed = dataclasses.replace(TASKS[0], task=TASKS[1].task, expected=TASKS[1].expected)
    dead = Rung(label="o", spec="vllm:other", base_url="http://127.0.0.1:9/v1", max_retries=0)
    for other, why in [
        (dataclasses.replace(spec, task=changed), "the journal's task is not the episode's"),
        (dataclasses.replace(spec, rung=dead), "the journal was recorded with model 'oracle'"),
    ]:
        cut.write_bytes(b"".join(lines[:6]))
        got = run_episode(dataclasses.replace(other, continue_journal=True), cut)
        assert got is not None and got.restarted is not None and why in got.restarted["why"]
        assert "resume" not in kinds(cut)
        cut.with_name(cut.name + ".restarted-1").unlink()


def test_a_run_that_ended_by_its_own_limit_is_not_continued(tmp_path: Path) -> None:
    rung = Rung(label="o", spec="oracle", factory=OracleFactory())
    spec = EpisodeSpec(
        suite="arithmetic",
        task=TASKS[0],
        rung=rung,
        protocol="native",
        repeat=0,
        limits=Limits(max_model_calls=1),
    )
    trace = tmp_path / "ended.jsonl"
    first = run_episode(spec, trace)
    assert first is not None and first.run is not None
    assert first.run.stop_reason == "max_model_calls"
    again = run_episode(dataclasses.replace(spec, continue_journal=True), trace)
    assert again is not None and "resume" not in kinds(trace) and again.restarted is not None
    assert again.restarted["why"] == "its run had ended (max_model_calls), not stalled"
    got, want = again.to_dict(), first.to_dict()
    assert {f: got[f] for f in COMPARED} == {f: want[f] for f in COMPARED}
