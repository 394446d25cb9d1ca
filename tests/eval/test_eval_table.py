"""A deterministic model that fails on known episodes gives exactly the expected table; the
protocol-health counts of a journal; Ctrl-C stops cleanly and resumes; endpoint caps hold."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from reactloop import FunctionModel, ModelRequest, ModelTurn, ToolCall
from reactloop.eval import (
    EpisodeRecord,
    EpisodeSpec,
    EvalConfig,
    Rung,
    load_suite,
    run_episode,
    run_eval,
)
from reactloop.eval.report.summary import summarize
from reactloop.eval.run.oracle import OracleFactory

TASKS = tuple(load_suite("arithmetic")[:4])  # 01 and 03: two items; 02 and 04: three
A_FAILS = frozenset({("arith-01", 0)})
B_FAILS = frozenset({("arith-02", 0), ("arith-02", 1), ("arith-02", 2), ("arith-03", 1)})


def ladder(out: Path, **options: Any) -> EvalConfig:
    rungs = (
        Rung(
            label="a", spec="oracle", factory=OracleFactory(A_FAILS), protocols=("native", "text")
        ),
        Rung(label="b", spec="oracle", factory=OracleFactory(B_FAILS)),
    )
    defaults: dict[str, Any] = {
        "suite": "arithmetic",
        "rungs": rungs,
        "out": out,
        "repeats": 3,
        "tasks": TASKS,
        "concurrency": 3,
        "fsync": False,
    }
    return EvalConfig(**(defaults | options))


def test_a_known_failure_pattern_gives_the_exact_table(tmp_path: Path) -> None:
    outcome = run_eval(ladder(tmp_path / "out"))
    assert outcome.completed and outcome.ran == 36 and len(outcome.records) == 36
    rows = {(r["rung"], r["protocol"]): r for r in summarize(outcome.records, 3)}
    for protocol in ("native", "text"):
        a = rows["a", protocol]
        assert (a["episodes"], a["passed"], a["failed"], a["errored"]) == (12, 11, 1, 0)
        assert a["success"] == pytest.approx(11 / 12)
        assert a["pass_at_1"] == pytest.approx(11 / 12)
        assert a["pass_at_k"] == 1.0  # every task solved at least once in 3
        assert a["pass_hat_k"] == pytest.approx(3 / 4)  # arith-01 not in all three
        assert a["mean_steps_success"] == pytest.approx(50 / 11)  # 2·4 + 3·5 + 3·4 + 3·5
        assert a["mean_tool_calls_success"] == pytest.approx(39 / 11)
        assert (a["n_tool_calls"], a["n_turns"]) == (42, 54)
        assert a["rate_invalid_arguments"] == a["rate_parallel_turns"] == 0.0
    b = rows["b", "native"]
    assert (b["passed"], b["failed"]) == (8, 4)
    assert b["pass_at_k"] == pytest.approx(3 / 4)  # arith-02 never
    assert b["pass_hat_k"] == pytest.approx(2 / 4)  # nor arith-03 in all three
    assert ("b", "text") not in rows
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    (comparison,) = saved["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["protocol"]) == ("a", "b", "native")
    assert (comparison["only_a"], comparison["only_b"], comparison["both"]) == (["arith-02"], [], 3)
    assert comparison["p_value"] == 1.0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| a | native | 12 | 11 | 1 | 0 | 91.7% [64.6%–98.5%] |" in report


def _messy(request: ModelRequest) -> ModelTurn:
    done = sum(1 for m in request.messages if m.role == "assistant")
    good = ToolCall(id=f"c{done}a", name="calculator", arguments='{"expression": "2 + 2"}')
    turns = [
        (good, ToolCall(id="c0b", name="nope", arguments="{}")),
        (ToolCall(id="c1", name="calculator", arguments='{"expr": 1}'),),
        (ToolCall(id="c2", name="calculator", arguments="{"),),
        (good,),
    ]
    if done < len(turns):
        return ModelTurn(tool_calls=turns[done], finish_reason="tool_calls")
    return ModelTurn(text="4")


def test_protocol_health_is_counted_from_the_journal(tmp_path: Path) -> None:
    task = TASKS[0]
    rung = Rung(label="messy", spec="messy", factory=lambda _: FunctionModel(_messy))
    spec = EpisodeSpec(suite="arithmetic", task=task, rung=rung, protocol="native", repeat=0)
    record = run_episode(spec, tmp_path / "trace.jsonl")
    assert record is not None and record.status == "failed"  # 4 is not the total
    assert record.run is not None
    assert record.run.health == {
        "turns": 5,
        "tool_calls": 5,
        "invalid_arguments": 2,
        "unknown_tools": 1,
        "loop_refused": 1,
        "format_errors": 0,
        "truncations": 0,
        "parallel_turns": 1,
        "wind_downs": 0,
    }
    assert record.run.called == ["calculator", "nope", "calculator", "calculator", "calculator"]
    assert [s["step"] for s in record.run.steps] == [1, 2, 3, 4, 5]


def test_ctrl_c_stops_cleanly_and_resume_runs_only_the_rest(tmp_path: Path) -> None:
    seen: list[str] = []

    def interrupt_after_five(record: EpisodeRecord) -> None:
        seen.append(record.key)
        if len(seen) == 5:
            raise KeyboardInterrupt

    first = run_eval(ladder(tmp_path / "out", report=False), on_record=interrupt_after_five)
    assert not first.completed
    assert 5 <= len(first.records) < 36  # the ones in flight finished or were cancelled
    before = {p.name: p.read_bytes() for p in (tmp_path / "out" / "episodes").iterdir()}
    second = run_eval(ladder(tmp_path / "out", resume=True))
    assert second.completed and second.skipped == len(first.records)
    assert second.ran == 36 - len(first.records)
    keys = [r.key for r in second.records]
    assert len(keys) == len(set(keys)) == 36
    after = {p.name: p.read_bytes() for p in (tmp_path / "out" / "episodes").iterdir()}
    assert all(after[name] == data for name, data in before.items())


def test_a_second_run_into_the_same_folder_needs_resume(tmp_path: Path) -> None:
    run_eval(ladder(tmp_path / "out", tasks=TASKS[:1], repeats=1, report=False))
    with pytest.raises(Exception, match="add --resume"):
        run_eval(ladder(tmp_path / "out", tasks=TASKS[:1], repeats=1))


class Gate:
    """Counts the calls in flight per endpoint; holds each until both endpoints are full."""

    def __init__(self, full: int) -> None:
        self.lock = threading.Lock()
        self.in_flight: dict[str, int] = {"x": 0, "y": 0}
        self.most: dict[str, int] = {"x": 0, "y": 0}
        self.full = full
        self.opened = threading.Event()

    def model(self, endpoint: str) -> FunctionModel:
        oracle = OracleFactory()

        def reply(request: ModelRequest) -> ModelTurn:
            with self.lock:
                self.in_flight[endpoint] += 1
                self.most[endpoint] = max(self.most[endpoint], self.in_flight[endpoint])
                if sum(self.in_flight.values()) == self.full:
                    self.opened.set()
            self.opened.wait(timeout=10)
            with self.lock:
                self.in_flight[endpoint] -= 1
            return inner.complete(request)

        inner = oracle(
            EpisodeSpec(suite="s", task=TASKS[0], rung=RUNG, protocol="native", repeat=0)
        )
        return FunctionModel(reply)


RUNG = Rung(label="unused", spec="oracle")


def test_each_endpoint_keeps_its_own_cap(tmp_path: Path) -> None:
    gate = Gate(full=3)  # x capped at 2, y at 1, the whole eval at 8
    rungs = (
        Rung(
            label="x",
            spec="oracle",
            base_url="http://x",
            concurrency=2,
            factory=lambda _: gate.model("x"),
        ),
        Rung(
            label="y",
            spec="oracle",
            base_url="http://y",
            concurrency=1,
            factory=lambda _: gate.model("y"),
        ),
    )
    config = ladder(tmp_path / "out", rungs=rungs, tasks=TASKS[:1] * 1, repeats=4, concurrency=8)
    outcome = run_eval(config)
    assert gate.opened.is_set()  # both endpoints were full at the same moment
    assert gate.most == {"x": 2, "y": 1}
    assert outcome.completed and len(outcome.records) == 8
