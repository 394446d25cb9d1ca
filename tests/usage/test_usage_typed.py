"""The accounting reads the typed events: a journal's lines and its typed events give the same
report; a field an older journal lacks (or a damaged one holds junk for) reads as unknown, not
as its default; a line without its required fields is left out and the rest accounted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, ScriptedModel
from reactloop.journal.reader import read_events
from reactloop.journal.writer import read_journal
from reactloop.usage import check_prefix, compaction_costs, step_quality, usage_report

TURN = {"text": "", "usage": {"input_tokens": 100, "output_tokens": 5}}


def _records(*events: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"step": 0, **e} for e in events]


def test_a_journal_and_its_typed_events_give_the_same_report(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    turns = [
        {"tool_calls": [{"name": "nothing", "arguments": {}}], "usage": {"input_tokens": 50}},
        {"content": "done", "usage": {"input_tokens": 80, "output_tokens": 3}},
    ]
    with Journal(path) as journal:
        Agent(ScriptedModel(turns), [], journal=journal).run("go")
    lines, typed = read_journal(path), read_events(path)
    assert usage_report(typed).to_dict() == usage_report(lines).to_dict()
    assert usage_report(path).to_dict() == usage_report(lines).to_dict()
    assert step_quality(typed) == step_quality(lines)
    assert usage_report(path).total.input_tokens == 130


def test_a_compaction_written_before_its_counts_existed() -> None:
    """No ``block``, no token estimates: the counts are unknown (``?``), and the prefix
    check takes a trim's block as the messages it replaced, a summary's as its ``by``."""
    events = _records(
        {"type": "run_start", "task": "t"},
        {"type": "request", "n_messages": 6, "messages_new": [{}] * 6},
        {"type": "turn", "turn": TURN},
        {"type": "compaction", "policy": "summarize", "start": 1, "replaced": 4, "by": [{}]},
        {"type": "request", "n_messages": 4, "messages_new": [{}]},
        {"type": "turn", "turn": TURN},
        {"type": "compaction", "start": "x", "replaced": 1, "tokens_before": 1e400},
    )
    cost, junk = compaction_costs(events)
    assert (cost.tokens_before, cost.tokens_after, cost.rewritten_tokens) == (None, None, None)
    assert "~? → ~? tokens" in cost.describe()[0]
    assert (junk.policy, junk.start, junk.replaced, junk.tokens_before) == ("?", None, 1, None)
    assert check_prefix(events) == []  # 6 - 4 + 1 sent, and one new
    trimmed = [dict(e, policy="trim") if e["type"] == "compaction" else e for e in events]
    assert [i.step for i in check_prefix(trimmed)] == [0]  # a trim keeps the count: 7 not 4


def test_a_damaged_line_is_read_for_what_it_holds_and_the_rest_accounted() -> None:
    events = _records(
        {"type": "run_start", "task": "t", "model": "m"},
        {"type": "turn", "turn": TURN},
        {"type": "turn", "turn": "not an object"},
        {"type": "warning", "kind": 7, "message": "?"},
        {"type": "turn", "turn": TURN},
        {"type": "stop", "stop_reason": "final_answer", "forced": "yes"},
        {"type": "stop", "stop_reason": "final_answer", "answer": "a"},
    )
    report = usage_report(events)
    assert [s.usage.input_tokens for s in report.steps] == [100, 100]
    assert report.model == "m" and report.complete
    assert [(r.stop_reason, r.forced) for r in report.runs] == [("final_answer", False)]
