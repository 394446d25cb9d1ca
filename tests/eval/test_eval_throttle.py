"""Adaptive concurrency per endpoint: a 429 storm loses and errors no episode, the cap halves on
a burst of refusals and grows back by one per cap successes, Retry-After holds the endpoint."""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

from reactloop.errors import ModelError, ProviderError
from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.throttle import MAX_HISTORY, EndpointGate, is_overload
from reactloop.eval.tasks.tasks import Task
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, error_reply
from reactloop.testing.openai_replies import json_reply

ARITHMETIC = load_suite("arithmetic")


def storm_tasks(count: int) -> tuple[Task, ...]:
    return tuple(
        Task(id=f"t{n:03d}", task=f"What is 17 * 23? (case {n})", expected=391)
        for n in range(count)
    )


class Storm:
    """Each episode's first call is refused three times in a row (twice 429 with a
    Retry-After, once 503 "overloaded"): more than the two retries an episode had before."""

    def __init__(self, refusals: int = 3, wait_ms: int = 20) -> None:
        self.refusals = refusals
        self.wait_ms = wait_ms
        self.seen: dict[str, int] = {}
        self.times: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        task = request.json["messages"][-1]["content"]
        with self.lock:
            count = self.seen.get(task, 0)
            self.seen[task] = count + 1
        status = 200
        if count < self.refusals:
            status = 503 if count == 2 else 429
        with self.lock:
            self.times.append((time.monotonic(), status))
        if status == 429:
            headers = {"retry-after-ms": str(self.wait_ms)}
            return error_reply(429, {"error": {"message": "slow down"}}, headers=headers)
        if status == 503:
            return error_reply(503, {"error": {"message": "the engine is overloaded"}})
        return json_reply(completion("The total is 391."))


def test_a_429_storm_loses_no_episode_and_errors_none(tmp_path: Path) -> None:
    storm = Storm()
    with FakeOpenAIServer(responder=storm) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url, concurrency=8)
        config = EvalConfig(
            suite="storm",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            concurrency=8,
            tasks=storm_tasks(16),
            fsync=False,
        )
        outcome = run_eval(config)
    assert len(outcome.records) == 16
    assert [r.status for r in outcome.records] == ["passed"] * 16
    (endpoint,) = outcome.endpoints
    assert endpoint["endpoint"] == rung.base_url
    assert endpoint["overloads"] == 16 * 3
    assert endpoint["max_cap"] == 8 and endpoint["min_cap"] < 8
    reasons = {point["reason"] for point in endpoint["history"]}
    assert {"start", "overload"} <= reasons
    report = (tmp_path / "out" / "report.md").read_text()
    assert "## Endpoint concurrency" in report
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["endpoints"][0]["overloads"] == 16 * 3


def test_retry_after_holds_every_call_to_the_endpoint(tmp_path: Path) -> None:
    storm = Storm(refusals=1, wait_ms=300)
    with FakeOpenAIServer(responder=storm) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url)
        config = EvalConfig(
            suite="storm",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            concurrency=1,
            tasks=storm_tasks(2),
            fsync=False,
        )
        outcome = run_eval(config)
    assert [r.status for r in outcome.records] == ["passed", "passed"]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(storm.times) if a[1] == 429]
    assert len(gaps) == 2  # each episode's first call refused once, then held 0.3 s
    assert min(gaps) >= 0.3


def test_the_cap_halves_once_per_burst_and_grows_back_additively() -> None:
    now = [0.0]
    gate = EndpointGate("e", 8, clock=lambda: now[0])
    with gate.slot(None) as first, gate.slot(None) as second:
        assert first == second == 0
    gate.refused(first, retry_after=0.0)
    gate.refused(second, retry_after=0.0)  # began before the cut: the same burst
    assert gate.cap == 4
    with gate.slot(None) as third:
        gate.refused(third, retry_after=0.0)
    assert gate.cap == 2
    for _ in range(2):
        gate.succeeded()
    assert int(gate.cap) == 3
    for _ in range(100):
        gate.succeeded()
    assert gate.cap == 8
    caps = [point["cap"] for point in gate.history]
    assert caps == [8, 4, 2, 3, 4, 5, 6, 7, 8]


def test_retry_after_sets_when_the_endpoint_takes_calls_again() -> None:
    now = [10.0]
    gate = EndpointGate("e", 2, clock=lambda: now[0])
    gate.refused(0, retry_after=5.0)
    assert gate.resume_at == 15.0
    now[0] = 12.0  # the run's time is up before the endpoint takes calls again
    try:
        with gate.slot(deadline=12.0):
            raise AssertionError("a slot before the Retry-After ran out")
    except ModelError as exc:
        assert exc.kind == "timeout"
    now[0] = 15.0
    with gate.slot(deadline=20.0) as epoch:
        assert epoch == 1 and gate.in_flight == 1
    assert gate.in_flight == 0


def test_the_history_stays_bounded() -> None:
    gate = EndpointGate("e", 4)
    for _ in range(3 * MAX_HISTORY):
        gate.refused(gate.epoch, retry_after=0.0)
        gate.cap = 4.0
    assert len(gate.history) <= MAX_HISTORY
    assert gate.history[0]["reason"] == "start"


def test_which_errors_are_overload() -> None:
    assert is_overload(ProviderError("slow down", status=429, retryable=True))
    assert is_overload(ProviderError("busy", status=503, retryable=True))
    assert is_overload(ModelError("the model is overloaded", retryable=True, kind="server"))
    assert not is_overload(ProviderError("insufficient_quota", status=429, retryable=True))
    assert not is_overload(ProviderError("bad gateway", status=502, retryable=True))
    assert not is_overload(ProviderError("slow down", status=429, retryable=False))


def test_an_endpoint_that_never_recovers_still_ends_errored(tmp_path: Path) -> None:
    def respond(request: RecordedRequest) -> Reply:
        return error_reply(429, {"error": {"message": "slow down"}}, headers={"retry-after": "0"})

    with FakeOpenAIServer(responder=respond) as server:
        rung = Rung(label="fake", spec="vllm:fake", base_url=server.base_url)
        config = EvalConfig(
            suite="arithmetic",
            rungs=(rung,),
            out=tmp_path / "out",
            repeats=1,
            tasks=tuple(ARITHMETIC[:1]),
            fsync=False,
        )
        outcome = run_eval(config)
        calls = len(server.requests)
    assert [r.status for r in outcome.records] == ["errored"]
    assert "slow down" in (outcome.records[0].error or "")
    assert calls == 21  # the first try and the gate's 20 retries
