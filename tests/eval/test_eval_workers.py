"""``workers``: episodes in worker processes give the one process's results; a worker that
dies loses only its in-flight episodes, recorded errored and run again by --resume; workers
start from a forkserver that has imported what they need."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop import FunctionModel, Model, ModelRequest, ModelTurn
from reactloop.eval import EpisodeSpec, EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.oracle import OracleFactory
from reactloop.eval.process_backend import _context, _preload

TASKS = tuple(load_suite("arithmetic")[:4])
SAME = ("status", "answer", "stop_reason", "model_calls", "tool_calls", "health", "called")


def deterministic(records: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {r["key"]: tuple(r.get(name) for name in SAME) for r in records}


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
        assert (tmp_path / "two" / record["trace"]).stat().st_size > 0
        assert (tmp_path / "two" / "pages" / (Path(record["trace"]).stem + ".html")).is_file()


def test_workers_start_from_a_forkserver_that_imports_the_driver_modules() -> None:
    import openai  # what a rung's adapter imports in the driver

    names = _preload()
    assert {"reactloop.eval.process_backend", "reactloop.loop.run_loop", openai.__name__} <= set(
        names
    )
    assert not any(name.endswith("__main__") for name in names)  # it would run a command
    if "forkserver" in multiprocessing.get_all_start_methods():  # POSIX; Windows spawns
        assert _context().get_start_method() == "forkserver"


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
    died = [r for r in first.records if r.get("reason") == "worker_died"]
    assert {r["task_id"] for r in died} >= {"arith-03"}
    assert all(r["status"] == "errored" for r in died)
    assert all(r["status"] == "passed" for r in first.records if r not in died)
    marker.unlink()
    second = run_eval(config(tmp_path / "out", rung, 2, resume=True))
    assert (second.ran, second.skipped) == (len(died), 8 - len(died))
    assert [r["status"] for r in second.records] == ["passed"] * 8


@dataclass(frozen=True)
class HangsOn:
    """The oracle, except that ``task``'s model call takes 4 s whatever the deadline."""

    task: str

    def __call__(self, episode: EpisodeSpec) -> Model:
        oracle = OracleFactory()(episode)
        if episode.task.id != self.task:
            return oracle

        def hang(request: ModelRequest) -> ModelTurn:
            time.sleep(4)
            return ModelTurn(text="too late")

        return FunctionModel(hang)


def test_a_stalled_episode_in_a_worker_stays_stalled_on_disk(tmp_path: Path) -> None:
    rung = Rung(label="o", spec="oracle", factory=HangsOn("arith-01"))
    cfg = config(tmp_path / "out", rung, 2, episode_seconds=0.2)
    outcome = run_eval(EvalConfig(**{**cfg.__dict__, "repeats": 1}))
    stalled = [r for r in outcome.records if r.get("reason") == "stalled"]
    assert [r["task_id"] for r in stalled] == ["arith-01"]
    saved = json.loads((tmp_path / "out" / "episodes" / "o__native__arith-01__0.json").read_text())
    assert saved["reason"] == "stalled"  # the late record the worker got was never saved
