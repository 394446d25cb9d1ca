"""The Ray backend on a two-node Ray cluster started outside the eval (``--ray-address``).

``ray.cluster_utils.Cluster`` runs two raylets on this machine, as Ray's own tests do, each
with a custom resource that names it. The episodes call the fake OpenAI server in this
process; the tests prove they ran on both nodes, give the local backend's results, bring
their journals back to the driver's out folder, and that a node lost mid-eval costs only its
in-flight episodes' first attempts (Ray runs them again on the other node), while an
episode that keeps killing its actor is recorded errored and run again by ``--resume``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import reactloop
from helpers import invoke
from reactloop import FunctionModel, Model, ModelTurn
from reactloop.errors import UsageError
from reactloop.eval import EvalConfig, EvalOutcome, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory
from reactloop.eval.run.ray_backend import RayBackend, forwarded_env, worker_nodes
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.tasks.tasks import Task
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, tool_call
from reactloop.testing.openai_replies import json_reply

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

KEY_ENV = "REACTLOOP_CLUSTER_TEST_KEY"
SAME = (
    "status", "answer", "stop_reason", "model_calls", "tool_calls", "usage", "health", "called",
    "check_detail", "trace", "tools",
)  # fmt: skip


@dataclass
class TwoNodes:
    cluster: Any
    worker: Any  # the second raylet's node handle, for remove_node
    address: str
    head_id: str
    worker_id: str


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[TwoNodes]:
    ray.shutdown()  # a Ray another module started is not this cluster
    cluster = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"head_node": 1}}
    )
    worker = cluster.add_node(num_cpus=1, resources={"worker_node": 1})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    ids = {
        name: node["NodeID"]
        for node in ray.nodes()
        for name in ("head_node", "worker_node")
        if node["Alive"] and name in node["Resources"]
    }
    ray.shutdown()  # the eval connects by itself, through the address it is given
    try:
        yield TwoNodes(cluster, worker, cluster.address, ids["head_node"], ids["worker_node"])
    finally:
        ray.shutdown()
        cluster.shutdown()


def respond(request: RecordedRequest) -> Reply:
    """A calculator call, then the answer: right for even cases, wrong for odd ones; the
    tokens differ from task to task."""
    messages = request.json["messages"]
    case = int(messages[1]["content"].rsplit("case ", 1)[1].rstrip(")"))
    usage = {"prompt_tokens": 10 + case, "completion_tokens": 3 + case % 4, "total_tokens": 0}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    if not any(m["role"] == "tool" for m in messages):
        calculator = tool_call("calculator", {"expression": "17 * 23"})
        return json_reply(completion(tool_calls=[calculator], usage=usage))
    return json_reply(completion(f"The total is {391 + case % 2}.", usage=usage))


def suite_file(folder: Path, count: int) -> Path:
    path = folder / "suite.jsonl"
    lines = [
        json.dumps({"id": f"t{n}", "task": f"What is 17 * 23? (case {n})", "expected": 391})
        for n in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def records(out: Path) -> dict[str, dict[str, Any]]:
    found = (json.loads(p.read_text()) for p in (out / "episodes").glob("*.json"))
    return {r["key"]: r for r in found}


def same(record: dict[str, Any]) -> list[Any]:
    """What must not depend on the backend: a step's timing is left out."""
    steps = [{k: v for k, v in step.items() if k != "seconds"} for step in record["steps"]]
    return [record.get(name) for name in SAME] + [steps]


def events(journal: Path) -> list[str]:
    return [json.loads(line)["type"] for line in journal.read_text().splitlines()]


def test_an_eval_on_the_cluster_gives_the_local_results_and_brings_the_journals_back(
    two_nodes: TwoNodes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "key-from-the-driver")  # the raylets started without it
    with FakeOpenAIServer(responder=respond) as server:
        models = tmp_path / "models.json"
        rung = {"label": "fake", "spec": "vllm:fake", "base_url": server.base_url}
        models.write_text(json.dumps([rung | {"api_key_env": KEY_ENV}]), encoding="utf-8")
        common = ["--suite", str(suite_file(tmp_path, 8)), "--models", str(models)]
        common += ["--repeats", "2", "--concurrency", "4", "--no-progress"]
        code, _, stderr = invoke("eval", *common, "--out", str(tmp_path / "local"))
        assert code == 0, stderr
        remote = ["--backend", "ray", "--ray-address", two_nodes.address]
        code, stdout, stderr = invoke("eval", *common, *remote, "--out", str(tmp_path / "ray"))
        assert code == 0, stderr
    assert "8 passed, 8 failed, 0 errored" in stdout
    local, spread = records(tmp_path / "local"), records(tmp_path / "ray")
    assert len(spread) == 16
    assert {k: same(r) for k, r in spread.items()} == {k: same(r) for k, r in local.items()}
    assert {r["ray_node"] for r in spread.values()} == {two_nodes.head_id, two_nodes.worker_id}
    for key, record in spread.items():  # every journal came back into the driver's DIR
        journal = tmp_path / "ray" / record["trace"]
        assert events(journal) == events(tmp_path / "local" / local[key]["trace"])
        assert events(journal)[-1] == "stop"
    keys = {r.headers.get("authorization") for r in server.requests}
    assert keys == {"Bearer key-from-the-driver"}  # sent to the workers by the driver


def test_the_api_key_and_base_url_variables_are_the_ones_forwarded() -> None:
    environ = {
        "OPENAI_API_KEY": "o",
        "OPENAI_BASE_URL": "http://proxy/v1",
        "ANTHROPIC_API_KEY": "a",
        "OLLAMA_HOST": "gpu:11434",
        "MY_KEY": "m",
        "HOME": "/root",
    }
    rungs = [
        Rung(label="a", spec="openai:gpt-4o-mini"),
        Rung(label="b", spec="react:ollama:qwen3:8b"),
        Rung(label="c", spec="vllm:x", api_key_env="MY_KEY"),
        Rung(label="d", spec="vllm:y", api_key_env="UNSET_KEY"),
    ]
    assert forwarded_env(rungs, environ) == {
        "MY_KEY": "m",
        "OLLAMA_HOST": "gpu:11434",
        "OPENAI_API_KEY": "o",
        "OPENAI_BASE_URL": "http://proxy/v1",
    }


def _has_ray_client() -> bool:
    from ray._private.utils import get_ray_client_dependency_error

    return get_ray_client_dependency_error() is None


@pytest.mark.skipif(_has_ray_client(), reason="needs a Ray without ray[client]")
def test_a_ray_client_address_without_ray_client_is_a_usage_error(tmp_path: Path) -> None:
    """Where ``ray[client]`` is installed, ``ray://`` is the Ray Client (not tested)."""
    ray.shutdown()  # connected by the tests before: this one connects afresh
    code, _, stderr = invoke(
        "eval", "--suite", "arithmetic", "--model", "vllm:fake", "--limit", "1",
        "--base-url", "http://127.0.0.1:9/v1", "--backend", "ray",
        "--ray-address", "ray://127.0.0.1:9", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 2
    assert "cannot connect to the Ray cluster at ray://127.0.0.1:9" in stderr
    assert "ray[client]" in stderr


def test_actors_go_to_the_alive_nodes_with_cpus() -> None:
    nodes = [
        {"NodeID": "head", "Alive": True, "Resources": {"memory": 1e9}},  # --num-cpus 0
        {"NodeID": "gone", "Alive": False, "Resources": {"CPU": 8.0}},
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 1.0, "GPU": 1.0}},
    ]
    assert worker_nodes(nodes) == ["a", "b"]
    assert worker_nodes(nodes[:2]) == ["head"]  # no node has CPUs: every alive one


def test_workers_with_another_reactloop_version_are_refused_with_what_nodes_need(
    two_nodes: TwoNodes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reactloop, "__version__", "0.0.0+driver")  # the workers keep theirs
    with pytest.raises(UsageError, match=r"Ray workers run reactloop .*reactloop 0\.0\.0\+driver"):
        RayBackend(2, tmp_path, address=two_nodes.address, write=print, save=print)


@dataclass(frozen=True)
class CrashOn:
    """The oracle, except that building the model of ``task_id`` ends the actor's process
    while ``marker`` exists (the test's folder: the cluster's nodes share this machine)."""

    marker: Path
    task_id: str

    def __call__(self, episode: EpisodeSpec) -> Model:
        if episode.task.id == self.task_id and self.marker.exists():
            os._exit(3)
        return OracleFactory()(episode)


def test_an_episode_that_keeps_killing_its_actor_is_errored_and_resume_reruns_it(
    two_nodes: TwoNodes, tmp_path: Path
) -> None:
    marker = tmp_path / "crash"
    marker.touch()
    tasks = tuple(load_suite("arithmetic")[:3])
    rung = Rung(label="o", spec="oracle", factory=CrashOn(marker, tasks[1].id))
    config = EvalConfig(
        suite="arithmetic", rungs=(rung,), out=tmp_path / "out", repeats=1, tasks=tasks,
        backend="ray", ray_address=two_nodes.address, concurrency=2, fsync=False,
    )  # fmt: skip
    here = sys.modules[__name__]  # not importable on the workers: CrashOn goes by value
    ray.cloudpickle.register_pickle_by_value(here)
    try:
        first = run_eval(config)
        first_records = list(first.records)  # read from DIR: the resume below rewrites them
        marker.unlink()
        resumed = run_eval(EvalConfig(**{**config.__dict__, "resume": True}))
    finally:
        ray.cloudpickle.unregister_pickle_by_value(here)
    assert first.completed
    assert [(r.status, r.reason) for r in first_records] == [
        ("passed", None),
        ("errored", "actor_died"),  # tried 1 + TASK_RETRIES times, each time its actor died
        ("passed", None),
    ]
    assert (resumed.ran, resumed.skipped, resumed.errored) == (1, 2, 0)
    assert [r.status for r in resumed.records] == ["passed"] * 3


@dataclass(frozen=True)
class SaysItsWorkspace:
    """A model whose answer is the task's workspace as the actor sees it, and a file in it."""

    def __call__(self, episode: EpisodeSpec) -> Model:
        folder = episode.task.workspace
        assert folder is not None
        text = (folder / "sub" / "data.txt").read_text(encoding="utf-8")
        return FunctionModel(lambda request: ModelTurn(text=f"{folder}|{text}"), name="where")


def test_a_task_workspace_is_sent_to_the_actors_not_read_from_the_driver_s_disk(
    two_nodes: TwoNodes, tmp_path: Path
) -> None:
    folder = tmp_path / "workspace"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "data.txt").write_text("from the driver", encoding="utf-8")
    tasks = tuple(
        Task(id=f"w{n}", task="Where?", expected="-", check="contains", workspace=folder)
        for n in range(4)
    )
    rung = Rung(label="w", spec="where", factory=SaysItsWorkspace())
    config = EvalConfig(
        suite="where", rungs=(rung,), out=tmp_path / "out", repeats=1, tasks=tasks,
        backend="ray", ray_address=two_nodes.address, concurrency=4, fsync=False,
    )  # fmt: skip
    here = sys.modules[__name__]
    ray.cloudpickle.register_pickle_by_value(here)
    try:
        outcome = run_eval(config)
    finally:
        ray.cloudpickle.unregister_pickle_by_value(here)
    seen = [r.run.answer.split("|") for r in outcome.records if r.run and r.run.answer]
    assert {text for _, text in seen} == {"from the driver"}
    assert all(Path(where).name.startswith("workspace-") for where, _ in seen)
    assert folder.as_posix() not in {where for where, _ in seen}
    assert {r.ray_node for r in outcome.records} == {two_nodes.head_id, two_nodes.worker_id}


def test_a_node_lost_mid_eval_loses_nothing_its_episodes_run_again_on_the_other(
    two_nodes: TwoNodes, tmp_path: Path
) -> None:
    """Runs last: it takes the second node away. Ray restarts the lost node's actor on the
    head node and runs the two episodes it had in flight again there."""
    first_calls = [0]
    arrived, release = threading.Condition(), threading.Event()

    def held(request: RecordedRequest) -> Reply:
        if not any(m["role"] == "tool" for m in request.json["messages"]):
            with arrived:
                first_calls[0] += 1
                arrived.notify_all()
        assert release.wait(timeout=120), "the lost episodes never started again"
        return respond(request)

    with FakeOpenAIServer(responder=held) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url)
        tasks = tuple(
            Task(id=f"t{n}", task=f"What is 17 * 23? (case {2 * n})", expected=391)
            for n in range(6)
        )
        config = EvalConfig(
            suite="lost", rungs=(rung,), out=tmp_path / "out", repeats=1, tasks=tasks,
            backend="ray", ray_address=two_nodes.address, concurrency=4, fsync=False,
        )  # fmt: skip
        outcome: list[EvalOutcome] = []
        running = threading.Thread(target=lambda: outcome.append(run_eval(config)))
        running.start()
        try:
            with arrived:  # four episodes in flight: two on each node's actor
                assert arrived.wait_for(lambda: first_calls[0] == 4, timeout=120)
            two_nodes.cluster.remove_node(two_nodes.worker)
            with arrived:  # the lost node's two, started again on the head node
                assert arrived.wait_for(lambda: first_calls[0] == 6, timeout=120)
        finally:
            release.set()
            running.join(timeout=300)
    assert not running.is_alive()
    (result,) = outcome
    assert result.completed and result.errored == 0
    assert [r.status for r in result.records] == ["passed"] * 6
    assert {r.ray_node for r in result.records} == {two_nodes.head_id}
    assert first_calls[0] == 8  # each episode's first call once, the lost two's twice
    for record in result.records:  # the journal of the run that finished, whole
        assert events(tmp_path / "out" / (record.trace or "")).count("stop") == 1
