"""``workers``: episodes in worker processes give the one process's results; a worker that
dies loses only its in-flight episodes, recorded errored and run again by --resume; workers
start from a forkserver that has imported what they need."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reactloop import FunctionModel, Model, ModelRequest, ModelTurn
from reactloop.eval import EpisodeRecord, EpisodeSpec, EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.forkserver import preload as _preload
from reactloop.eval.run.forkserver import worker_context as _context
from reactloop.eval.run.oracle import OracleFactory
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion
from reactloop.testing.openai_replies import json_reply

TASKS = tuple(load_suite("arithmetic")[:4])
SAME = ("status", "answer", "stop_reason", "model_calls", "tool_calls", "health", "called")


def deterministic(records: Sequence[EpisodeRecord]) -> dict[str, tuple[Any, ...]]:
    """The fields of each record (by key) that do not depend on where it ran."""
    forms = (r.to_dict() for r in records)
    return {d["key"]: tuple(d.get(name) for name in SAME) for d in forms}


def config(out: Path, rung: Rung, workers: int, **more: Any) -> EvalConfig:
    return EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=out,
        repeats=2,
        tasks=TASKS,
        concurrency=4,
        workers=workers,
        fsync=False,
        **more,
    )


def test_workers_give_the_results_of_one_process(tmp_path: Path) -> None:
    rung = Rung(label="o", spec="oracle", factory=OracleFactory(frozenset({("arith-02", 1)})))
    one = run_eval(config(tmp_path / "one", rung, 1))
    two = run_eval(config(tmp_path / "two", rung, 2))
    assert len(two.records) == 8
    assert deterministic(two.records) == deterministic(one.records)
    for record in two.records:
        trace = Path(record.trace or "")
        assert (tmp_path / "two" / trace).stat().st_size > 0
        assert (tmp_path / "two" / "pages" / (trace.stem + ".html")).is_file()


def test_workers_start_from_a_forkserver_that_imports_the_driver_modules() -> None:
    import openai  # what a rung's adapter imports in the driver

    names = _preload()
    assert {
        "reactloop.eval.run.forkserver",
        "reactloop.loop.run_loop",
        openai.__name__,
    } <= set(names)
    assert not any(name.endswith("__main__") for name in names)  # it would run a command
    assert not any(name.startswith("openai.") for name in names)  # openai imports its own
    assert len(repr(names)) < 64 * 1024  # one argument of the forkserver's command line
    if "forkserver" in multiprocessing.get_all_start_methods():  # POSIX; Windows spawns
        assert _context().get_start_method() == "forkserver"


def test_the_reactloop_command_s_forkserver_imports_what_a_worker_needs_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run as ``python -m reactloop`` (whose main module no worker imports again), the
    forkserver leaves out the driver's command line, report and progress bar; run as the
    console script, it adds what the script imports (``reactloop.cli``)."""
    import openai

    import reactloop.cli
    import reactloop.eval.run.runner  # the driver's modules, loaded

    driver_only = {"reactloop.eval.run.runner", "reactloop.eval.report.write"}
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name="reactloop.__main__")  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)
    names = set(_preload())
    assert {
        "reactloop.eval.run.process_worker",
        "reactloop.loop.run_loop",
        openai.__name__,
    } <= names
    assert not names & (driver_only | {"reactloop.cli"})
    script = types.ModuleType("__main__")
    script.main = reactloop.cli.main  # type: ignore[attr-defined]  # as pip's script has it
    monkeypatch.setitem(sys.modules, "__main__", script)
    names = set(_preload())
    assert "reactloop.cli" in names and not names & driver_only
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # a script
    assert driver_only <= set(_preload())


CONSOLE_SCRIPT = """import re, sys
from reactloop.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


@pytest.mark.parametrize("entry", ["module", "script"])
def test_the_reactloop_command_runs_its_episodes_in_workers(tmp_path: Path, entry: str) -> None:
    """``python -m reactloop eval`` and the console script, with their narrower preload."""
    script = tmp_path / "reactloop"
    script.write_text(CONSOLE_SCRIPT)
    command = [sys.executable, *(["-m", "reactloop"] if entry == "module" else [str(script)])]
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=lambda _: json_reply(completion("The total is 0."))) as server:
        args = ["eval", "--suite", "arithmetic", "--limit", "4", "--model", "vllm:fake"]
        args += ["--base-url", server.base_url, "--repeats", "2", "--concurrency", "4"]
        args += ["--workers", "2", "--out", str(out), "--no-progress"]
        done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    records = [json.loads(p.read_text()) for p in (out / "episodes").glob("*.json")]
    assert len(records) == 8 and {r["status"] for r in records} == {"failed"}
    assert "fake · native: success 0.0%" in done.stdout


def test_a_driver_with_thousands_of_sdk_modules_loaded_still_gets_its_forkserver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A test session had loaded ~4,000 modules: their names overflowed the one argument of
    the forkserver's command line (128 KiB), which never started."""
    for n in range(5000):
        module = types.ModuleType(f"openai.types.generated_{n:04}")
        module.__file__ = f"/site-packages/openai/types/generated_{n:04}.py"
        monkeypatch.setitem(sys.modules, module.__name__, module)
    assert len(repr(_preload())) < 64 * 1024


@dataclass(frozen=True)
class DiesOn:
    """The oracle, except that the process dies on ``task`` while ``marker`` exists."""

    task: str
    marker: str

    def __call__(self, episode: EpisodeSpec) -> Model:
        oracle = OracleFactory()(episode)
        if episode.task.id != self.task or not os.path.exists(self.marker):
            return oracle

        def die(request: ModelRequest) -> ModelTurn:
            os._exit(3)

        return FunctionModel(die)


def test_a_dead_worker_loses_only_its_episodes_and_resume_reruns_them(tmp_path: Path) -> None:
    marker = tmp_path / "die"
    marker.touch()
    rung = Rung(label="o", spec="oracle", factory=DiesOn("arith-03", str(marker)))
    first = run_eval(config(tmp_path / "out", rung, 2))
    assert len(first.records) == 8  # none lost
    died = [r for r in first.records if r.reason == "worker_died"]
    assert {r.task_id for r in died} >= {"arith-03"}
    assert all(r.status == "errored" for r in died)
    assert all(r.status == "passed" for r in first.records if r not in died)
    marker.unlink()
    second = run_eval(config(tmp_path / "out", rung, 2, resume=True))
    assert (second.ran, second.skipped) == (len(died), 8 - len(died))
    assert [r.status for r in second.records] == ["passed"] * 8


@dataclass(frozen=True)
class HangsOn:
    """The oracle, except that ``task``'s model call takes 15 s whatever the deadline."""

    task: str

    def __call__(self, episode: EpisodeSpec) -> Model:
        oracle = OracleFactory()(episode)
        if episode.task.id != self.task:
            return oracle

        def hang(request: ModelRequest) -> ModelTurn:
            time.sleep(15)
            return ModelTurn(text="too late")

        return FunctionModel(hang)


def test_a_stalled_episode_in_a_worker_stays_stalled_on_disk(tmp_path: Path) -> None:
    """A 2 s window (and the 2 s grace) is long enough for an oracle episode on a loaded
    machine (0.2 s stalled ordinary episodes too at a load of 20), far short of the hang."""
    rung = Rung(label="o", spec="oracle", factory=HangsOn("arith-01"))
    cfg = config(tmp_path / "out", rung, 2, episode_seconds=2.0)
    outcome = run_eval(EvalConfig(**{**cfg.__dict__, "repeats": 1}))
    stalled = [r for r in outcome.records if r.reason == "stalled"]
    assert [r.task_id for r in stalled] == ["arith-01"]
    saved = json.loads((tmp_path / "out" / "episodes" / "o__native__arith-01__0.json").read_text())
    assert saved["reason"] == "stalled"  # the late record the worker got was never saved


CLI_CHILD = """
import sys
from reactloop.cli.eval import eval_command
eval_command(sys.argv[1:], prog_name="reactloop eval")
"""


def test_ctrl_c_to_the_whole_group_stops_the_workers_cleanly(tmp_path: Path) -> None:
    """Ctrl-C in a terminal signals the driver and its workers: the workers leave it to the
    driver, which cancels them; no worker dies, no traceback, exit 130."""
    arrived, release = threading.Event(), threading.Event()
    lock, seen = threading.Lock(), [0]

    def respond(request: RecordedRequest) -> Reply:
        with lock:
            seen[0] += 1
            if seen[0] >= 2:  # both workers have an episode in flight
                arrived.set()
        release.wait(timeout=30)
        return json_reply(completion("The total is 0."))

    out = tmp_path / "out"
    with FakeOpenAIServer(responder=respond) as server:
        args = ["--suite", "arithmetic", "--model", "vllm:fake", "--base-url", server.base_url]
        args += ["--repeats", "1", "--concurrency", "2", "--workers", "2", "--out", str(out)]
        child = subprocess.Popen(
            [sys.executable, "-c", CLI_CHILD, *args],
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a group of its own, as a terminal's foreground job
        )
        try:
            assert arrived.wait(timeout=120)
            os.killpg(child.pid, signal.SIGINT)
        finally:
            release.set()
            _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    records = [json.loads(p.read_text()) for p in (out / "episodes").glob("*.json")]
    assert not [r for r in records if r.get("reason") == "worker_died"]


@dataclass(frozen=True)
class ReportsCollector:
    """A model that answers with its process's garbage collector's thresholds, and whether
    anything is frozen out of its reach."""

    def __call__(self, episode: EpisodeSpec) -> Model:
        import gc

        def answer(request: ModelRequest) -> ModelTurn:
            return ModelTurn(text=f"{gc.get_threshold()} frozen={gc.get_freeze_count() > 0}")

        return FunctionModel(answer)


def answers(records: Sequence[EpisodeRecord]) -> set[str]:
    return {r.to_dict()["answer"] for r in records}


def test_a_worker_collects_garbage_less_often_and_leaves_the_driver_s_alone(
    tmp_path: Path,
) -> None:
    """A worker holds hundreds of episodes: at the default thresholds its collector took a
    tenth of its CPU (issue 40). A script's own process, running the eval in it, keeps its."""
    import gc

    from reactloop.eval.run.memory import GC_THRESHOLDS

    rung = Rung(label="gc", spec="gc", factory=ReportsCollector())
    workers = run_eval(config(tmp_path / "two", rung, 2))
    assert answers(workers.records) == {f"{GC_THRESHOLDS} frozen=True"}
    before, frozen = gc.get_threshold(), gc.get_freeze_count() > 0
    here = run_eval(config(tmp_path / "one", rung, 1))
    assert answers(here.records) == {f"{before} frozen={frozen}"}
    assert gc.get_threshold() == before != GC_THRESHOLDS
