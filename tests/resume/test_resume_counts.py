"""What a resumed run counts on from the fold of its journal (``journal/fold.py``), and nothing
else: its time so far (its clock goes on from it), its cost at its price, and whether its last
model call was told to answer now. The live loop and the fold move them with the same
functions (``journal/run_counts.py``); a resume writes none of them into the budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ScriptedModel, tool
from reactloop.journal.fold import fold
from reactloop.journal.reader import read_events
from reactloop.journal.writer import read_journal
from reactloop.resume.resume_run import prepare_resume
from reactloop.usage.prices import Price

PRICE = Price(input=2.0, output=8.0, cached_input=0.5)


@tool(read_only=True)
def peek(key: str) -> str:
    """Read a key."""
    return f"value of {key}"


def _turns(steps: int) -> list[dict[str, Any]]:
    calls = [
        {"tool_calls": [{"name": "peek", "arguments": {"key": f"k{i}"}}], "usage": _usage(i)}
        for i in range(steps)
    ]
    return [*calls, {"content": "done", "usage": _usage(steps)}]


def _usage(i: int) -> dict[str, int]:
    return {"input_tokens": 1000 + 300 * i, "output_tokens": 40 + i}


def _recorded(path: Path, turns: list[dict[str, Any]], **given: Any) -> Any:
    with Journal(path) as journal:
        return Agent(ScriptedModel(turns), [peek], journal=journal, **given).run("go")


def _cut_after(path: Path, kind: str, nth: int, *, later: float = 0.0) -> Path:
    """The journal up to its ``nth`` event of ``kind`` (a kill there); every event after the
    run's start ``later`` seconds later (a run that had been going that long)."""
    lines = path.read_text().splitlines()
    kept, seen = [lines[0]], 0
    for line in lines[1:]:
        event = json.loads(line)
        if event["type"] != "run_start":
            event["t"] += later
        kept.append(json.dumps(event))
        seen += event["type"] == kind
        if seen == nth:
            break
    cut = path.with_name("cut.jsonl")
    cut.write_text("\n".join(kept) + "\n")
    return cut


def test_a_resumed_runs_clock_goes_on_from_its_time_so_far(tmp_path: Path) -> None:
    turns = _turns(3)
    _recorded(tmp_path / "run.jsonl", turns, limits=Limits(max_seconds=None))
    cut = _cut_after(tmp_path / "run.jsonl", "tool_result", 2, later=500.0)
    _, state = prepare_resume(cut)
    assert 500.0 <= state.counts.seconds_before < 510.0  # the time at its last completed point
    limits = Limits(max_seconds=600.0)  # a quarter left: the time's budget notice is due at once
    result = Agent(ScriptedModel(turns), [peek]).resume(cut, limits=limits)
    assert result.answer == "done" and result.seconds >= state.counts.seconds_before
    notices = [m.content for m in result.history if m.kind == "notice"]
    assert len(notices) == 1 and " s left" in notices[0]
    whole = fold(read_events(cut))  # the resume event: the run's time then, as the loop had it
    assert whole.counts.seconds_before >= state.counts.seconds_before


def test_a_resumed_runs_cost_is_the_uninterrupted_ones(tmp_path: Path) -> None:
    turns = _turns(3)
    full = _recorded(tmp_path / "run.jsonl", turns, price=PRICE, limits=Limits(max_cost=1.0))
    cut = _cut_after(tmp_path / "run.jsonl", "tool_result", 2)
    _, state = prepare_resume(cut, PRICE)
    assert state.counts.cost == pytest.approx(sum(PRICE.cost(t.usage) for t in _used(cut)))
    assert state.counts.last_usage == _used(cut)[-1].usage  # the cost wind-down's measure
    again = cut.with_name("again.jsonl")
    again.write_bytes(cut.read_bytes())
    result = Agent(ScriptedModel(turns), [peek], price=PRICE).resume(cut)
    assert result.answer == "done" and full.cost is not None and full.cost > 0
    assert result.cost == pytest.approx(full.cost)
    unpriced = Agent(ScriptedModel(turns), [peek]).resume(again, limits=Limits())
    assert unpriced.cost is None  # no price, no cost (the fold counts none either)


def _used(path: Path) -> list[Any]:
    from reactloop.messages import ModelTurn

    return [ModelTurn.from_dict(e["turn"]) for e in read_journal(path) if e["type"] == "turn"]


def test_an_answer_told_to_come_now_is_forced_after_a_resume_too(tmp_path: Path) -> None:
    """The last model call winds down (no tool left to call): its answer is forced. Killed
    before the loop read that answer, the resumed run stops with it forced, as the
    uninterrupted run did: the fold's ``request`` says the call was told to answer now."""
    turns = _turns(1)
    limits = Limits(max_model_calls=2, max_seconds=None)
    full = _recorded(tmp_path / "run.jsonl", turns, limits=limits)
    assert full.answer == "done" and full.forced
    cut = _cut_after(tmp_path / "run.jsonl", "turn", 2)
    _, state = prepare_resume(cut)
    assert state.counts.forced and not state.turn_handled
    result = Agent(ScriptedModel(turns), [peek]).resume(cut)
    assert result.answer == "done" and result.forced
