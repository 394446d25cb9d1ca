"""Stalled episodes: ``--episode-seconds`` stops an episode that outlasts it, with its journal
complete, records it ``errored`` (reason ``stalled``), and ``--resume`` runs it again; a
server that accepts connections and never answers, or a model that ignores the run's deadline,
cannot stall the eval."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import FunctionModel, Limits, Model, ModelRequest, ModelTurn, read_journal
from reactloop.cli.eval import eval_command
from reactloop.eval import EpisodeSpec, EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run import backends
from reactloop.eval.run.oracle import OracleFactory
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion
from reactloop.testing.openai_replies import json_reply

TASKS = tuple(load_suite("arithmetic")[:2])


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts every connection, reads what comes, never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    listener.close()
    for connection in held:
        connection.close()


def answering(request: RecordedRequest) -> Reply:
    task = request.json["messages"][-1]["content"]
    answer = next(t.expected for t in TASKS if t.task == task)
    return json_reply(completion(f"The total is {answer}."))


def test_a_silent_server_stalls_no_eval_and_resume_reruns_its_episodes(
    tmp_path: Path, silent_server: str
) -> None:
    out = tmp_path / "out"
    args = ["--suite", "arithmetic", "--model", "vllm:fake", "--limit", "2", "--repeats", "1"]
    args += ["--out", str(out), "--episode-seconds", "1", "--no-progress"]
    result = CliRunner().invoke(eval_command, [*args, "--base-url", silent_server])
    assert result.exit_code == 0, result.output
    records = json.loads((out / "results.json").read_text())["episodes"]
    assert [(r["status"], r["reason"]) for r in records] == [("errored", "stalled")] * 2
    for record in records:
        assert "--episode-seconds 1" in record["error"] and record["journal"] == "complete"
        events = read_journal(out / record["trace"])
        assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "timeout"
    with FakeOpenAIServer(responder=answering) as server:
        again = [*args, "--base-url", server.base_url, "--resume"]
        result = CliRunner().invoke(eval_command, again)
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 2  # both stalled episodes, once each
    records = json.loads((out / "results.json").read_text())["episodes"]
    assert [r["status"] for r in records] == ["passed", "passed"]


def test_the_run_s_own_time_limit_is_a_failure_not_a_stall(
    tmp_path: Path, silent_server: str
) -> None:
    rung = Rung(label="fake", spec="vllm:fake", base_url=silent_server)
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=TASKS[:1],
        limits=Limits(max_seconds=0.5),
        episode_seconds=30.0,
        fsync=False,
    )
    (record,) = run_eval(config).records
    assert record.run is not None and record.run.stop_reason == "timeout"
    assert record.status == "failed" and record.reason is None


def test_a_model_that_ignores_the_deadline_is_given_up_and_the_eval_goes_on(
    tmp_path: Path,
) -> None:
    release = threading.Event()
    oracle = OracleFactory()

    def factory(spec: EpisodeSpec) -> Model:
        if spec.task.id != TASKS[0].id:
            return oracle(spec)

        def hang(request: ModelRequest) -> ModelTurn:
            release.wait()  # ignores request.timeout
            return ModelTurn(text="too late")

        return FunctionModel(hang)

    rung = Rung(label="o", spec="oracle", factory=factory)
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=TASKS,
        episode_seconds=0.2,
        fsync=False,
    )
    try:
        outcome = run_eval(config)
    finally:
        release.set()
    status = {r.task_id: (r.status, r.reason) for r in outcome.records}
    assert status == {TASKS[0].id: ("errored", "stalled"), TASKS[1].id: ("passed", None)}
    hung = next(r for r in outcome.records if r.task_id == TASKS[0].id)
    assert (hung.journal or "").startswith("incomplete")
    saved = json.loads((tmp_path / "out" / "episodes" / "o__native__arith-01__0.json").read_text())
    assert saved["reason"] == "stalled"


def test_without_episode_seconds_the_run_s_own_limit_bounds_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``--episode-seconds``, and an episode whose model is never made (its factory never
    returns: the loop has not started, so no deadline of the run can end it) is given up
    ``RUN_GRACE`` past the run's own ``--max-seconds``, recorded ``stalled`` saying so; the
    eval never waits for ever (it did)."""
    release = threading.Event()
    oracle = OracleFactory()

    def factory(spec: EpisodeSpec) -> Model:
        if spec.task.id == TASKS[0].id:
            release.wait()
        return oracle(spec)

    monkeypatch.setattr(backends, "RUN_GRACE", 1.0, raising=False)
    rung = Rung(label="o", spec="oracle", factory=factory)
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path / "out",
        repeats=1,
        tasks=TASKS,
        limits=Limits(max_seconds=2.0),
        fsync=False,
        report=False,
    )
    outcomes: list[Any] = []
    runner = threading.Thread(target=lambda: outcomes.append(run_eval(config)), daemon=True)
    runner.start()
    runner.join(60)
    release.set()
    assert outcomes, "the eval still waited for the hung episode after 60 s"
    records = {r.task_id: r for r in outcomes[0].records}
    assert records[TASKS[0].id].reason == "stalled"
    assert records[TASKS[0].id].error == "stalled: no end within its --max-seconds 2"
    assert records[TASKS[1].id].status == "passed"
