"""Near-repeat loops: the same tool with slightly different arguments while its results bring
nothing new is warned, then stopped, with the evidence journaled; real work is never flagged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, StopReason, ToolCall, tool
from reactloop.journal.writer import read_journal
from reactloop.loop.loop_guard import LoopGuard, canonical_key
from reactloop.loop.near_repeat import words_alike
from reactloop.result import RunResult
from reactloop.tools.base import Tool

ARTICLE = "The tea costs 35 roubles a cup and twelve guests are coming to the party. " * 20


@tool(read_only=True)
def stuck_pages(query: str, page: int) -> str:
    """Search, one page of results at a time (this one always returns the first page)."""
    return f"results for {query!r}: {ARTICLE}"


@tool(read_only=True)
def real_pages(query: str, page: int) -> str:
    """Search, one page of results at a time."""
    return f"page {page}: " + " ".join(f"item{page * 100 + i}" for i in range(60))


@tool(read_only=True)
def search(query: str) -> str:
    """Search the notes."""
    return "no results"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return "ok"


@tool(read_only=True)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    left, right = expression.split("+")
    return str(int(left) + int(right))


def turns(name: str, arguments: list[dict[str, Any]]) -> list[ModelTurn | str]:
    calls: list[ModelTurn | str] = [
        ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name=name, arguments=json.dumps(a)),))
        for i, a in enumerate(arguments)
    ]
    return [*calls, "done"]


def run(
    tools: list[Tool], script: list[ModelTurn | str], tmp_path: Path, **limits: Any
) -> tuple[RunResult, list[dict[str, Any]]]:
    journal = tmp_path / "run.jsonl"
    limits = {"max_model_calls": 30, "max_tool_calls": 30, **limits}
    with Journal(journal) as observer:
        agent = Agent(ScriptedModel(script), tools, limits=Limits(**limits), journal=observer)
        result = agent.run("find the price of tea")
    return result, read_journal(journal)


def near_warnings(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "warning" and e["kind"] == "near_repeat"]


def test_a_paging_loop_over_the_same_text_is_warned_then_stopped(tmp_path: Path) -> None:
    pages = [{"query": "tea price", "page": n} for n in range(1, 9)]
    result, events = run([stuck_pages], turns("stuck_pages", pages), tmp_path)
    assert result.stop_reason is StopReason.LOOP_DETECTED
    results = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert [r["ok"] for r in results[:3]] == [True, True, True]
    assert "brought nothing new" in results[3]["error"]  # the 4th call: a warning, not run
    assert "loop detected" in results[4]["error"]  # the 5th: the run stops
    assert result.tool_calls == 3
    warned, stopped = near_warnings(events)
    assert warned["evidence"]["tool"] == "stuck_pages"
    assert [json.loads(a)["page"] for a in warned["evidence"]["arguments"]] == [1, 2, 3, 4]
    assert "differ only in numbers or a few words" in warned["evidence"]["why"]
    assert len(stopped["evidence"]["arguments"]) == 5


def test_a_legitimate_paging_run_whose_results_differ_is_never_flagged(tmp_path: Path) -> None:
    pages = [{"query": "tea price", "page": n} for n in range(1, 13)]
    result, events = run([real_pages], turns("real_pages", pages), tmp_path)
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.tool_calls == 12
    assert near_warnings(events) == []


def test_rephrased_queries_that_find_nothing_are_caught(tmp_path: Path) -> None:
    queries = [
        "price of tea",
        "tea price",
        "price of a cup of tea",
        "tea cup price",
        "price of tea cup",
    ]
    script = turns("search", [{"query": q} for q in queries])
    result, events = run([search], script, tmp_path)
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert near_warnings(events)[0]["evidence"]["tool"] == "search"


def test_writing_different_files_that_each_answer_ok_is_work(tmp_path: Path) -> None:
    writes = [{"path": f"notes/{n}.txt", "content": f"part {n}"} for n in range(8)]
    result, events = run([write_file], turns("write_file", writes), tmp_path)
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.tool_calls == 8
    assert near_warnings(events) == []


def test_sums_with_different_answers_are_work(tmp_path: Path) -> None:
    sums = [{"expression": f"{n}+{n}"} for n in range(8)]
    result, events = run([calculator], turns("calculator", sums), tmp_path)
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert near_warnings(events) == []


def test_the_thresholds_are_configurable_and_can_be_turned_off(tmp_path: Path) -> None:
    pages = [{"query": "tea", "page": n} for n in range(1, 9)]
    script = turns("stuck_pages", pages)
    off, events = run([stuck_pages], script, tmp_path, near_repeat_warn=None, near_repeat_stop=None)
    assert off.stop_reason is StopReason.FINAL_ANSWER and near_warnings(events) == []
    early, events = run(
        [stuck_pages], turns("stuck_pages", pages), tmp_path, near_repeat_warn=2, near_repeat_stop=3
    )
    assert early.stop_reason is StopReason.LOOP_DETECTED and early.tool_calls == 1


def test_another_call_in_between_breaks_the_streak() -> None:
    guard = LoopGuard(Limits())
    actions = []
    for page in range(1, 9):
        for name, arguments in (("stuck", {"page": page}), ("other", {"n": page})):
            call = ToolCall(id="x", name=name, arguments=json.dumps(arguments))
            verdict = guard.check(call, arguments)
            actions.append(verdict.action)
            key = canonical_key(call, arguments)
            guard.record(key, "same", side_effects=False, call=(name, arguments))
    assert set(actions) == {"run"}


def test_words_alike() -> None:
    assert words_alike("price of tea", "tea price")
    assert words_alike("page 2 of the report", "page 3 of the report")
    assert not words_alike("mkdir build", "touch notes.txt")
    assert not words_alike("", "anything")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.text(max_size=600)),
        min_size=1,
        max_size=30,
        unique_by=lambda x: x[1],
    )
)
def test_calls_whose_results_all_differ_are_never_flagged(calls: list[tuple[int, str]]) -> None:
    guard = LoopGuard(Limits(repeat_warn=50, repeat_stop=50, pingpong_warn=50, pingpong_stop=50))
    seen: set[str] = set()
    for page, content in calls:
        normal = " ".join(content.lower().split())
        if normal in seen or len(normal) > 256:  # long texts may overlap: judged by shingles
            return
        seen.add(normal)
        arguments = {"query": "q", "page": page}
        call = ToolCall(id="x", name="t", arguments=json.dumps(arguments))
        assert guard.check(call, arguments).action == "run"
        key = canonical_key(call, arguments)
        guard.record(key, content, side_effects=False, call=("t", arguments))


def test_the_guard_alone_warns_on_the_fourth_near_repeat_and_stops_on_the_fifth() -> None:
    guard = LoopGuard(Limits())
    actions = []
    for page in range(1, 6):
        arguments = {"query": "tea", "page": page}
        call = ToolCall(id="x", name="search", arguments=json.dumps(arguments))
        verdict = guard.check(call, arguments)
        actions.append(verdict.action)
        if verdict.action == "run":
            guard.record(verdict.key, "no results", side_effects=False, call=("search", arguments))
    assert actions == ["run", "run", "run", "warn", "stop"]
