"""Why a call did not run is a field of its result (``ToolResult.not_run``), written where
the result is made; resume decides from it, never from the error's wording. A journal
written before the field existed reads through ``journal/legacy.py`` alone."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ScriptedModel, read_journal, tool
from reactloop.journal.legacy import not_run_of
from reactloop.messages import NotRun
from reactloop.resume.resume_run import rebuild


@tool
def send(to: str) -> str:
    """Send.

    Args:
        to: the recipient
    """
    return f"sent to {to}"


def _call(to: str, call_id: str) -> dict[str, Any]:
    return {"name": "send", "arguments": {"to": to}, "id": call_id}


def _results(path: Path) -> dict[str, dict[str, Any]]:
    return {
        e["result"]["call_id"]: e["result"]
        for e in read_journal(path)
        if e["type"] == "tool_result"
    }


def _run(tmp_path: Path, turns: list[Any], **options: Any) -> dict[str, dict[str, Any]]:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        Agent(ScriptedModel(turns), [send], journal=journal, **options).run("go")
    return _results(path)


def test_a_call_over_the_tool_call_limit_says_so_in_a_field(tmp_path: Path) -> None:
    turns = [{"tool_calls": [_call("a", "c1"), _call("b", "c2")]}, {"content": "done"}]
    results = _run(tmp_path, turns, limits=Limits(max_tool_calls=1))
    assert "not_run" not in results["c1"]  # a call that ran: its line as before
    assert results["c2"]["not_run"] == "tool_call_limit"


def test_a_declined_call_says_so_in_a_field(tmp_path: Path) -> None:
    turns = [{"tool_calls": [_call("a", "c1")]}, {"content": "done"}]
    results = _run(tmp_path, turns, approve=lambda call, tool: "not today")
    assert results["c1"]["not_run"] == "declined"
    assert results["c1"]["error"] == "not run: not today"


def test_the_call_the_loop_guard_stopped_the_run_on_says_so(tmp_path: Path) -> None:
    same = {"tool_calls": [_call("a", "")]}
    turns = [same] * 6 + [{"content": "gave up"}]
    results = _run(tmp_path, turns, limits=Limits(max_model_calls=10))
    outcomes = [r.get("not_run") for r in results.values()]
    assert "loop_detected" in outcomes or "loop_guard" in outcomes


def _cut_and_closed(tmp_path: Path, result: dict[str, Any], error: str) -> list[dict[str, Any]]:
    """A run cut after its one call's ``tool_start``, that call closed by a cancel."""
    turns = [{"tool_calls": [_call("a", "s1")]}, {"content": "ok"}]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns), [send], journal=journal).run("go")
    events = read_journal(trace)
    start = next(i for i, e in enumerate(events) if e["type"] == "tool_start")
    cut = events[: start + 1]
    t, step = cut[start]["t"], cut[start]["step"]
    closed = {
        "type": "tool_result",
        "t": t,
        "step": step,
        "content": json.dumps({"ok": False, "error": error}),
        "result": {"call_id": "s1", "name": "send", "ok": False, "executed": False, **result},
    }
    return [*cut, closed, {"type": "stop", "t": t, "step": step, "stop_reason": "cancelled"}]


@pytest.mark.parametrize(
    ("result", "error", "state"),
    [
        ({"not_run": "stopped"}, "closed, however it is worded", "uncertain"),
        ({"not_run": "cancelled"}, "worded anew", "not_started"),
        ({"not_run": None}, "not executed: cancelled", "done"),  # the field decides
        ({}, "not executed: cancelled", "uncertain"),  # a journal without the field
        ({}, "cancelled: the run was cancelled before it ran", "not_started"),
        ({}, "something else", "done"),
    ],
)
def test_resume_reopens_a_call_by_its_field(
    tmp_path: Path, result: dict[str, Any], error: str, state: str
) -> None:
    rebuilt = rebuild(_cut_and_closed(tmp_path, result, error))
    assert [(c.call.id, c.state) for c in rebuilt.calls] == [("s1", state)]


def test_the_old_spellings_are_read_in_one_place() -> None:
    old = {"ok": False, "error": "not run: the time limit (5 s) is reached"}
    assert not_run_of(old) == "time_limit"
    assert not_run_of({"ok": False}, json.dumps({"ok": False, "error": "not executed: x"})) == (
        "stopped"
    )
    assert not_run_of({"ok": False, "error": "not run: no", "not_run": "declined"}) == "declined"
    assert not_run_of({"ok": True, "output": "not executed: x", "error": None}) is None


def test_the_docs_name_every_reason_a_call_did_not_run() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "journal.md").read_text("utf-8")
    row = next(line for line in docs.splitlines() if line.startswith("| `tool_result` |"))
    assert [v for v in typing.get_args(NotRun) if f"`{v}`" not in row] == []
