"""``EpisodeRecord``: every record the eval writes reads back typed and writes back as the same
file (keys, values and their order), and a record of an earlier version reads the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.records.record import EPISODE_KEYS, RUN_KEYS, EpisodeRecord
from reactloop.eval.run.oracle import OracleFactory


def _text(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1, default=str) + "\n"


def test_every_record_of_an_eval_writes_back_as_its_file(tmp_path: Path) -> None:
    rung = Rung(label="oracle", spec="oracle", factory=OracleFactory(), protocols=("native",))
    config = EvalConfig(
        suite="arithmetic",
        rungs=(rung,),
        out=tmp_path,
        repeats=2,
        tasks=tuple(load_suite("arithmetic")[:3]),
        workers=2,
        fsync=False,
        report=False,
    )
    outcome = run_eval(config)
    files = sorted((tmp_path / "episodes").glob("*.json"))
    assert len(files) == 6
    for path in files:
        text = path.read_text(encoding="utf-8")
        record = EpisodeRecord.from_dict(json.loads(text))
        assert _text(record.to_dict()) == text
        assert record.passed and record.run is not None and record.run.model_calls > 0
        assert record.extra == {}
    assert outcome.errored == 0


EPISODE = dict.fromkeys(EPISODE_KEYS, "x") | {"key": "oracle/native/a/0", "repeat": 0}
RUN = dict.fromkeys(RUN_KEYS) | {"stop_reason": "final_answer", "model_calls": 2, "tool_calls": 1}
RUN |= {"usage": {}, "health": {}, "steps": [], "called": []}


def test_the_shapes_the_backends_write_keep_their_order() -> None:
    shapes = [
        EPISODE | {"status": "errored", "error": "ValueError: no"},  # the harness failed
        EPISODE | {"status": "errored", "reason": "stalled", "error": "e", "journal": "j"},
        EPISODE | {"status": "errored", "reason": "worker_died", "error": "gone"},
        EPISODE | {"status": "errored", "reason": "actor_died", "error": "e", "journal": "j"}
        | {"ray_node": "n1"},
        EPISODE | RUN | {"tools": ["calculator"], "status": "passed", "check_detail": "ok"},
        EPISODE | RUN | {"error": "late", "tools": [], "resumed_from_step": 2}
        | {"resumed_after": "no_stop", "status": "errored", "reason": "stalled"}
        | {"journal": "complete"},
        EPISODE | RUN | {"children": [{"name": "c"}], "tools": [], "restarted": {"why": "w"}}
        | {"status": "failed", "check_detail": "wrong", "ray_node": "n2"},
    ]  # fmt: skip
    for shape in shapes:
        back = EpisodeRecord.from_dict(shape).to_dict()
        assert list(back.items()) == list(shape.items())


def test_a_record_of_an_earlier_version_reads_the_same() -> None:
    old = {"key": "r/native/t/0", "rung": "r", "protocol": "native", "status": "failed"}
    old |= {"stop_reason": "max_steps", "model_calls": 3, "tool_calls": 1, "shiny": [1]}
    record = EpisodeRecord.from_dict(old)
    assert record.status == "failed" and not record.passed
    assert record.run is not None and record.run.model_calls == 3
    assert record.run.health == {} and record.run.steps == []
    assert record.extra == {"shiny": [1]}
    assert list(record.to_dict())[-1] == "shiny"  # a key it does not know, written back last


OPTIONAL = ("children", "tools", "resumed", "restarted", "reason", "journal", "check_detail")


@given(
    st.sets(st.sampled_from(OPTIONAL)),
    st.booleans(),
    st.sampled_from(["passed", "failed", "errored"]),
    st.one_of(st.none(), st.text(max_size=5)),
)
def test_any_record_the_writers_compose_round_trips(
    present: set[str], has_run: bool, status: str, error: str | None
) -> None:
    """The writers' order: the episode's keys, the run's, then the marks, the status and what
    follows it (``error`` there only without a run)."""
    record = dict(EPISODE)
    if has_run:
        record |= RUN | {"error": error}
    values = {
        "children": {"children": []},
        "tools": {"tools": ["a"]},
        "resumed": {"resumed_from_step": 1, "resumed_after": "no_stop"},
        "restarted": {"restarted": {"why": "w", "journal": "j"}},
    }
    for name in ("children", "tools", "resumed", "restarted"):
        if name in present:
            record |= values[name]
    record["status"] = status
    if "reason" in present:
        record["reason"] = "stalled"
    if not has_run and error is not None:
        record["error"] = error
    for name in ("journal", "check_detail"):
        if name in present:
            record[name] = "s"
    assert list(EpisodeRecord.from_dict(record).to_dict().items()) == list(record.items())
