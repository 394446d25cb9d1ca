"""``reactloop eval --resume`` on ``--backend ray`` continues an interrupted episode from its
journal, as the local backend does: the driver has each journal in flight as it grows, sends
an interrupted one to the actor that continues it, and writes the whole one back. The eval
is SIGKILLed with episodes in flight (each held by the server at a step); on resume the
continued journals are one run, the server is never asked again for a recorded step, the
results are an uninterrupted eval's, and a journal that cannot go on (damaged; a workspace
that is gone, as on another node) starts again with the old one kept aside by the driver."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_eval_resume_journal import (
    CLI,
    TASKS,
    WRITE_TASK,
    SteppedServer,
    WritingServer,
    _descends_from,
    assert_same_results,
    eval_args,
    kinds,
    records,
    records_of,
    resume_damaged,
    run_cli,
    stepped,  # noqa: F401  (the fixture)
    steps_of,
    trace_of,
    turns,
    uninterrupted,
)

from reactloop import read_journal
from reactloop.eval import EpisodeRecord, EvalConfig, Resumed, Rung, run_eval
from reactloop.eval.run.continued import set_aside
from reactloop.eval.run.ray_journals import ActorJournals, DriverJournals, Ended

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """One local Ray for the module; the evals run in child processes connect to it."""
    ray.shutdown()  # a Ray another module started
    context = ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield str(context.address_info["gcs_address"])
    ray.shutdown()


def on_ray(args: list[str], address: str) -> list[str]:
    return [*args, "--backend", "ray", "--ray-address", address]


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    """Until ``condition`` holds (checked every 50 ms): the driver writes the journals."""
    pause = threading.Event()
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        pause.wait(0.05)
    raise AssertionError(f"never: {what}")


def episode_actors() -> list[int]:
    """The pids of this test's Ray's episode actors (the processes its raylet started)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(
                b"ray::EpisodeActor"
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if _descends_from(pid, os.getpid())]


def kill_driver(child: subprocess.Popen[bytes]) -> None:
    """SIGKILL the eval, then wait until Ray has ended its actors (they share its fate), so
    that none goes on once the server answers."""
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    wait_for(lambda: not episode_actors(), "the dead driver's actors ended")


def journal_turns(out: Path, index: int) -> int:
    try:
        return turns(trace_of(out, index))
    except ValueError:  # not there yet
        return -1


@pytest.mark.skipif(not Path("/proc/self/cmdline").is_file(), reason="finds actors in /proc")
def test_a_killed_ray_eval_continues_its_episodes_from_their_journals(
    tmp_path: Path,
    stepped: SteppedServer,  # noqa: F811
    ray_address: str,
) -> None:
    # tasks 0 and 1 finish; 2..6 are in flight, each held at a step: 2 before any turn,
    # 4 at its last calculator step; 5's journal is then damaged and 6's removed
    stepped.hold = {2: 1, 3: 2, 4: 4, 5: 2, 6: 3}
    out = tmp_path / "out"
    args = eval_args(stepped.server.base_url, out, "--limit", "7", "--concurrency", "5")
    child = subprocess.Popen(
        [sys.executable, "-c", CLI, *on_ray(args, ray_address)], stderr=subprocess.DEVNULL
    )
    recorded = {2: 0, 3: 1, 4: 3, 5: 1, 6: 2}
    try:
        stepped.wait_held(5)
        assert len(episode_actors()) == 2
        wait_for(  # the driver has each held episode's journal up to the step held
            lambda: all(journal_turns(out, n) == t for n, t in recorded.items()),
            "the journals in flight written into DIR",
        )
    finally:
        kill_driver(child)
    stepped.released.set()
    first = stepped.steps_asked()
    assert sorted(records(out)) == [0, 1]
    assert {n: turns(trace_of(out, n)) for n in range(2, 7)} == recorded
    for n in range(2, 7):
        assert first[n] == list(range(1, recorded[n] + 2))  # the last one in flight
        assert "stop" not in kinds(trace_of(out, n))
    resume_damaged(out, on_ray([*args, "--resume"], ray_address), stepped, recorded)
    assert all("ray_node" in r for r in records(out).values())

    want = uninterrupted(stepped.server.base_url, tmp_path / "whole", 7)  # locally
    assert_same_results(records(out), want)
    assert all(r["status"] == "passed" for r in want.values())


@pytest.mark.skipif(not Path("/proc/self/cmdline").is_file(), reason="finds actors in /proc")
@pytest.mark.parametrize("workspace_kept", [True, False])
def test_a_ray_workspace_episode_continues_on_its_node_else_starts_again(
    tmp_path: Path, ray_address: str, workspace_kept: bool
) -> None:
    suite = tmp_path / "write.jsonl"
    suite.write_text(json.dumps(WRITE_TASK) + "\n")
    out = tmp_path / "out"
    writing = WritingServer()
    with writing.server:
        args = on_ray(eval_args(writing.server.base_url, out), ray_address)
        args[args.index("arithmetic")] = str(suite)
        child = subprocess.Popen([sys.executable, "-c", CLI, *args], stderr=subprocess.DEVNULL)
        try:
            assert writing.waiting.wait(timeout=120)  # step 1 wrote the file
            wait_for(lambda: bool(list((out / "traces").glob("*.jsonl"))), "the journal in DIR")
            (trace,) = (out / "traces").glob("*.jsonl")
            wait_for(lambda: "tool_result" in kinds(trace), "step 1's result in DIR")
        finally:
            kill_driver(child)
        writing.released.set()
        journal = trace.read_bytes()
        workspace = Path(read_journal(trace)[0]["config"]["workspace"])
        assert (workspace / "answer.txt").read_text() == "42\n"
        if not workspace_kept:  # as on another node than the actor's: no such folder there
            (workspace / "answer.txt").unlink()
            workspace.rmdir()
        resumed = run_cli([*args, "--resume"])
    (record,) = records_of(out)
    assert record["status"] == "passed" and kinds(trace)[-1] == "stop"
    if workspace_kept:  # this machine's actors find it: the work goes on in it
        assert "1 episodes continued from their journals, 0 started again" in resumed.stderr
        assert writing.writes == 1 and record["resumed_from_step"] == 1
        assert kinds(trace).count("resume") == 1 and kinds(trace).count("stop") == 1
        assert not list((out / "traces").glob("*.restarted-*"))
    else:
        assert "0 episodes continued from their journals, 1 started again" in resumed.stderr
        assert writing.writes == 2 and "is gone" in record["restarted"]["why"]
        assert record["restarted"]["journal"] == f"traces/{trace.name}.restarted-1"
        assert (out / "traces" / f"{trace.name}.restarted-1").read_bytes() == journal
        assert "resume" not in kinds(trace)
    assert not workspace.exists()


def test_a_stalled_ray_episode_continues_on_the_local_backend(
    tmp_path: Path,
    stepped: SteppedServer,  # noqa: F811
    ray_address: str,
) -> None:
    stepped.hold = {1: 3}  # never released during the first eval: it stalls there
    rung = Rung(label="fake", spec="vllm:fake", base_url=stepped.server.base_url)
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=tuple(TASKS[:2]),
        episode_seconds=8.0,  # the other episode must end in it, on a loaded machine too
        backend="ray",
        fsync=False,
        report=False,
    )
    first = run_eval(config)
    assert [r.reason for r in first.records] == [None, "stalled"]
    stepped.released.set()
    stepped.steps_asked()
    trace = trace_of(config.out, 1)
    # the run's deadline stopped it and its actor sent the journal back; or (the actor
    # slower to start the run than the dispatcher's grace) it was given up in flight, its
    # journal as far as it had come back
    came_back = first.records[1].journal == "complete"
    assert turns(trace) == 2 and (kinds(trace)[-1] == "stop") == came_back

    again = run_eval(EvalConfig(**{**config.__dict__, "resume": True, "backend": "local"}))
    assert (again.continued, again.restarted) == (1, 0)
    assert stepped.steps_asked() == {1: list(range(3, steps_of(1) + 1))}
    (record,) = [r for r in again.records if r.task_id == TASKS[1].id]
    assert record.status == "passed" and record.resumed is not None
    assert record.resumed.after == ("timeout" if came_back else "no_stop")
    stops = [e["stop_reason"] for e in read_journal(trace) if e["type"] == "stop"]
    assert stops == ["timeout", "final_answer"][1 - came_back :]
    assert kinds(trace).count("resume") == 1


def write_whole(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def test_the_driver_sets_the_old_journal_aside_before_it_writes_a_restarted_one(
    tmp_path: Path,
) -> None:
    traces, folder = tmp_path / "traces", tmp_path / "actor"
    traces.mkdir()
    folder.mkdir()
    (traces / "e.jsonl").write_bytes(b"old 1\nold 2\n")
    (traces / "e.jsonl.restarted-1").write_bytes(b"from an earlier eval\n")
    driver, actor = DriverJournals(traces, write_whole), ActorJournals(folder)
    sent = driver.to_send("e", resume=True)
    assert sent == b"old 1\nold 2\n" and driver.to_send("e", resume=False) is None
    trace = actor.begin("e", sent)
    early = actor.progress(driver.wanted(["e"]))
    assert early["e"][1:] == (False, 0, sent)
    # the actor's start_attempt found it could not go on: it moved it aside, started anew
    set_aside(trace)
    trace.write_bytes(b"fresh 1\nfresh 2 torn")
    pieces = actor.progress(driver.wanted(["e"]))
    assert pieces["e"][1:] == (True, 0, b"fresh 1\n")  # whole lines only
    driver.take(pieces, running={"e"})
    assert (traces / "e.jsonl.restarted-2").read_bytes() == sent
    assert (traces / "e.jsonl").read_bytes() == b"fresh 1\n"
    driver.take(early, running={"e"})  # a late reply of the file it had sent: left out
    assert (traces / "e.jsonl").read_bytes() == b"fresh 1\n"
    with trace.open("ab") as more:
        more.write(b"\nfresh 3\n")
    driver.take(actor.progress(driver.wanted(["e"])), running={"e"})
    assert (traces / "e.jsonl").read_bytes() == b"fresh 1\nfresh 2 torn\nfresh 3\n"
    marks = {"why": "damaged", "journal": "traces/e.jsonl.restarted-1"}
    record = EpisodeRecord(key="e", restarted=marks)
    finished = driver.finish("e", record, actor.end("e"))
    assert finished is not None and finished.restarted == {
        "why": "damaged",
        "journal": "traces/e.jsonl.restarted-2",
    }
    assert record.restarted == marks  # a new record: the one given is left as it was
    assert (traces / "e.jsonl.restarted-2").read_bytes() == sent
    assert (traces / "e.jsonl.restarted-1").read_bytes() == b"from an earlier eval\n"
    assert not list((traces).glob("*.restarted-3")) and not list(folder.iterdir())


def test_a_continued_journal_grows_in_dir_and_an_attempt_run_again_starts_over(
    tmp_path: Path,
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "e.jsonl").write_bytes(b"old\n")
    driver = DriverJournals(traces, write_whole)
    first = ActorJournals(tmp_path / "one")
    (tmp_path / "one").mkdir()
    trace = first.begin("e", driver.to_send("e", resume=True))
    with trace.open("ab") as more:
        more.write(b"resume\nstep 2\n")
    driver.take(first.progress(driver.wanted(["e"])), running={"e"})
    assert (traces / "e.jsonl").read_bytes() == b"old\nresume\nstep 2\n"
    # its actor died; Ray runs it again on a restarted actor, from the journal it was sent
    again = ActorJournals(tmp_path / "two")
    (tmp_path / "two").mkdir()
    retry = again.begin("e", b"old\n")
    with retry.open("ab") as more:
        more.write(b"resume\n")
    pieces = again.progress(driver.wanted(["e"]))
    assert pieces["e"][1:] == (False, 0, b"old\nresume\n")
    driver.take(pieces, running=set())  # no longer in flight: its outcome came first
    assert (traces / "e.jsonl").read_bytes() == b"old\nresume\nstep 2\n"
    driver.take(pieces, running={"e"})
    assert (traces / "e.jsonl").read_bytes() == b"old\nresume\n"
    ended = again.end("e")
    assert ended == Ended(journal=b"old\nresume\n", torn=None, restarted=False)
    continued = EpisodeRecord(key="e", resumed=Resumed(step=1, after="killed"))
    assert driver.finish("e", continued, ended) is continued
    assert [p.name for p in traces.iterdir()] == ["e.jsonl"]
