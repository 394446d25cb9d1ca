"""The report taken as the records arrive: each record is counted into the tables and its part
of the files put aside when its episode ends, in whatever order they end, so that the end of
the eval reads no record back. Its files are byte for byte those made from the folder
afterwards, in report order (``write_report`` over the stored records, as before)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.records.record import RUN_KEYS, EpisodeRecord
from reactloop.eval.records.store import ResultsStore, StoredRecords
from reactloop.eval.report.process import ReportProcess
from reactloop.eval.report.summary import Tally
from reactloop.eval.report.write import EPISODE_COLUMNS, _episode_row, write_report
from reactloop.eval.run.oracle import OracleFactory
from reactloop.eval.run.plan import plan, positions
from reactloop.testing import FakeOpenAIServer, RecordedRequest, Reply, completion, error_reply
from reactloop.testing.openai_replies import json_reply

TASKS = tuple(load_suite("arithmetic")[:5])
FILES = ("results.csv", "results.json", "summary.csv", "report.md", "index.html")


def _respond(request: RecordedRequest) -> Reply:
    """The first task answered slowly (its episodes end after later ones), the second refused
    (errored), the others answered, the fourth wrongly."""
    task = request.json["messages"][-1]["content"]
    if task == TASKS[1].task:
        return error_reply(503, {"error": {"message": "overloaded"}})
    answer = next(t.expected for t in TASKS if t.task == task)
    answer = answer + 1 if task == TASKS[3].task else answer
    reply = json_reply(completion(f"The total is {answer}.", model="served"))
    return Reply(
        status=reply.status,
        headers=reply.headers,
        body=reply.body,
        delay=0.4 * (task == TASKS[0].task),
    )


def _config(out: Path, server: FakeOpenAIServer, **options: Any) -> EvalConfig:
    rungs = (
        Rung(label="a", spec="oracle", factory=OracleFactory(), protocols=("native", "text")),
        Rung(label="b", spec="oracle", factory=OracleFactory(frozenset({("arith-03", 1)}))),
        Rung(
            label="served",
            spec="vllm:fake",
            base_url=server.base_url,
            max_retries=0,
            prices={"input": 0.3, "output": 1.7},
        ),
    )
    defaults: dict[str, Any] = {"suite": "arithmetic", "rungs": rungs, "out": out, "repeats": 2}
    return EvalConfig(**(defaults | {"tasks": TASKS, "concurrency": 6, "fsync": False} | options))


def _remade(out: Path, config: EvalConfig, folder: Path) -> dict[str, bytes]:
    """The report made again from ``out``'s records in report order, in a copy of ``out``."""
    shutil.copytree(out, folder)
    for name in FILES:
        (folder / name).unlink()
    store = ResultsStore(folder, fsync=False)
    stems = [s.file_stem for s in plan(config, list(TASKS)) if store.has(s.file_stem)]
    endpoints = json.loads((out / "results.json").read_text(encoding="utf-8"))["endpoints"]
    write_report(
        folder,
        StoredRecords(store, stems),
        k=config.repeats,
        endpoints=endpoints,
        report_process=ReportProcess.here(),
    )
    return {name: (folder / name).read_bytes() for name in FILES}


@pytest.mark.parametrize("workers", [1, 2])
def test_the_report_taken_as_records_arrive_is_the_one_remade_from_the_folder(
    tmp_path: Path, workers: int
) -> None:
    arrived: list[str] = []
    with FakeOpenAIServer(responder=_respond) as server:
        config = _config(tmp_path / "out", server, workers=workers)
        outcome = run_eval(config, on_record=lambda record: arrived.append(record.key))
    planned = [s.key for s in plan(config, list(TASKS))]
    assert sorted(arrived) == sorted(planned) and arrived != planned  # out of report order
    made = {name: (tmp_path / "out" / name).read_bytes() for name in FILES}
    assert made == _remade(tmp_path / "out", config, tmp_path / "remade")
    errored = {r.key for r in outcome.records if r.status == "errored"}
    assert errored == {f"served/native/arith-02/{n}" for n in (0, 1)}
    assert outcome.summary == json.loads(made["results.json"])["summary"]
    assert "## Errored episodes" in made["report.md"].decode()


def test_a_resumed_report_takes_the_stored_records_from_their_files(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_respond) as server:
        config = _config(tmp_path / "out", server)
        run_eval(config)
        (tmp_path / "out" / "episodes" / "a__text__arith-04__1.json").unlink()
        resumed = run_eval(EvalConfig(**{**config.__dict__, "resume": True}))
    assert resumed.ran == 3 and resumed.skipped == len(plan(config, list(TASKS))) - 3
    made = {name: (tmp_path / "out" / name).read_bytes() for name in FILES}
    assert made == _remade(tmp_path / "out", config, tmp_path / "remade")


def test_each_episode_s_position_is_its_place_in_the_plan() -> None:
    config = EvalConfig(
        suite="arithmetic",
        rungs=(
            Rung(label="a", spec="oracle", protocols=("native", "text")),
            Rung(label="b", spec="oracle"),
        ),
        out=Path("unused"),
        repeats=3,
    )
    specs = plan(config, list(TASKS))
    position = positions(config, list(TASKS))
    assert [position(spec) for spec in specs] == list(range(len(specs)))


def _record(
    n: int, rung: str, task: int, status: str, model: str, cost: float | None, extra: dict[str, int]
) -> dict[str, Any]:
    seconds = [0.1 * (n % 7) + 0.05, None if n % 5 == 0 else 1 / (n + 3)]
    return {
        "key": f"{rung}/native/t{task}/{n}",
        "rung": rung,
        "protocol": "native",
        "model": model,
        "task_id": f"t{task}",
        "status": status,
        "stop_reason": "final_answer",
        "model_calls": 2,
        "tool_calls": n % 3,
        "usage": {"input_tokens": 10 + n, "cached_tokens": n % 2, "output_tokens": 3},
        "cost": cost,
        "server_model": f"served-{n % 2}",
        "health": {"turns": 2, "tool_calls": n % 3, **extra},
        "steps": [
            {"step": step + 1, "input_tokens": 7 * n + step, "cached_tokens": 0, "seconds": s}
            for step, s in enumerate(seconds)
        ],
    }


RECORDS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.integers(0, 4),
        st.sampled_from(["passed", "failed", "errored"]),
        st.sampled_from(["m1", "m2"]),
        st.none() | st.floats(0, 10, allow_nan=False) | st.sampled_from([0.1, 0.2, 1 / 3]),
        st.dictionaries(st.sampled_from(["x_odd", "y_new"]), st.integers(0, 3), max_size=2),
    ),
    max_size=40,
).map(lambda rows: [_record(n, *row) for n, row in enumerate(rows)])


@settings(max_examples=60, deadline=None)
@given(RECORDS, st.randoms(use_true_random=False))
def test_the_tables_of_records_in_any_order_are_those_in_report_order(
    records: list[dict[str, Any]], rng: random.Random
) -> None:
    def tables(counted: Tally) -> str:
        figures = (counted.summary(3), counted.comparisons(), list(counted.per_step().items()))
        return json.dumps(figures, default=str)

    in_order, shuffled = Tally(), Tally()
    for record in records:
        in_order.add(EpisodeRecord.from_dict(record))
    arrival = list(enumerate(records))
    rng.shuffle(arrival)
    for position, record in arrival:
        shuffled.add(EpisodeRecord.from_dict(record), position)
    assert tables(shuffled) == tables(in_order)


TOKENS = ("input_tokens", "cached_tokens", "output_tokens")


def _json_row(record: dict[str, Any]) -> list[Any]:
    """results.csv's row as read from a record's JSON form (its keys are the columns)."""
    usage = record.get("usage") or {}
    values = {name: record.get(name) for name in EPISODE_COLUMNS}
    values |= {name: usage.get(name) for name in TOKENS}
    values["tools"] = " ".join(record.get("tools") or ())
    if not isinstance(values["expected"], str | int | float | type(None)):
        values["expected"] = json.dumps(values["expected"], ensure_ascii=False)
    return [values[name] for name in EPISODE_COLUMNS]


@settings(max_examples=60, deadline=None)
@given(
    RECORDS,
    st.none() | st.integers() | st.text(max_size=4) | st.lists(st.integers(), max_size=2),
    st.none() | st.lists(st.sampled_from(["calculator", 'é,"x']), max_size=2),
    st.booleans(),
)
def test_a_typed_record_s_csv_row_is_its_json_form_s(
    records: list[dict[str, Any]], expected: Any, tools: list[str] | None, errored: bool
) -> None:
    """The row the driver writes from the typed record (no JSON form made for it) is the one
    its JSON form gives: with a run or without (an errored record), any ``expected``."""
    for record in records:
        record |= {"expected": expected, "tools": tools, "check_detail": "d", "seed": 3}
        if errored:  # no run: the harness failed before it
            record = {k: v for k, v in record.items() if k not in RUN_KEYS} | {"error": "E"}
        typed = EpisodeRecord.from_dict(record)
        assert _episode_row(typed) == _json_row(typed.to_dict())
        assert _episode_row(typed) == _json_row(record)
