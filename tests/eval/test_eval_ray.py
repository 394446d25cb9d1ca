"""The Ray backend on a local Ray started by the test gives the local backend's results."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reactloop.eval import EpisodeRecord, EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory
from reactloop.eval.tasks.tasks import Task
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, error_reply
from reactloop.testing.openai_replies import json_reply

ray = pytest.importorskip("ray")

SAME = (
    "status",
    "answer",
    "stop_reason",
    "model_calls",
    "tool_calls",
    "health",
    "called",
    "check_detail",
    "trace",
    "seed",
    "tools",
)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def deterministic(records: Sequence[EpisodeRecord]) -> dict[str, tuple[Any, ...]]:
    forms = (r.to_dict() for r in records)
    return {d["key"]: tuple(d.get(name) for name in SAME) for d in forms}


def test_ray_backend_gives_the_same_results_as_local(local_ray: None, tmp_path: Path) -> None:
    rungs = (
        Rung(
            label="a",
            spec="oracle",
            factory=OracleFactory(frozenset({("arith-02", 1)})),
            protocols=("native", "text"),
        ),
        Rung(label="b", spec="oracle", factory=OracleFactory(frozenset({("arith-01", 0)}))),
    )
    tasks = tuple(load_suite("arithmetic")[:3])

    def config(out: str, backend: str) -> EvalConfig:
        return EvalConfig(
            suite="arithmetic",
            rungs=rungs,
            out=tmp_path / out,
            repeats=2,
            tasks=tasks,
            backend=backend,
            concurrency=4,
            seed=7,
            fsync=False,
        )

    local = run_eval(config("local", "local"))
    remote = run_eval(config("ray", "ray"))
    assert remote.completed and len(remote.records) == 18
    assert deterministic(remote.records) == deterministic(local.records)
    for record in remote.records:  # the journals came back from the actors into DIR
        assert (tmp_path / "ray" / (record.trace or "")).stat().st_size > 0
    (tmp_path / "ray" / "episodes" / f"{remote.records[0].key.replace('/', '__')}.json").unlink()
    resumed = run_eval(EvalConfig(**{**config("ray", "ray").__dict__, "resume": True}))
    assert (resumed.ran, resumed.skipped) == (1, 17)
    assert deterministic(resumed.records) == deterministic(local.records)


def test_ray_actors_gate_their_calls_through_a_429_storm(local_ray: None, tmp_path: Path) -> None:
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def respond(request: RecordedRequest) -> Reply:
        task = request.json["messages"][-1]["content"]
        with lock:
            count = seen[task] = seen.get(task, 0) + 1
        if count <= 3:  # more refusals than the two retries an episode had before the gate
            return error_reply(429, {"error": {"message": "slow"}}, headers={"retry-after": "0"})
        return json_reply(completion("The total is 391."))

    tasks = tuple(Task(id=f"t{n}", task=f"What is 17 * 23? ({n})", expected=391) for n in range(6))
    with FakeOpenAIServer(responder=respond) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url)
        outcome = run_eval(
            EvalConfig(
                suite="storm",
                rungs=(rung,),
                out=tmp_path / "out",
                repeats=1,
                tasks=tasks,
                backend="ray",
                concurrency=4,
                fsync=False,
            )
        )
    assert [r.status for r in outcome.records] == ["passed"] * 6
    assert sorted(e["actor"] for e in outcome.endpoints) == [0, 1]
    assert sum(e["overloads"] for e in outcome.endpoints) == 6 * 3
