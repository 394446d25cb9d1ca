"""A tree's spending across a resume: what a sub-agent spent counts in its parent, also when
the parent's state is folded from its journal (``child_stop``), when a killed child is resumed
(its ``TreeBudget`` handed its ``RunCounts``), and when a child's recorded outcome stands
(``count_spent``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, tool
from reactloop.journal.fold import fold
from reactloop.journal.reader import read_events
from reactloop.journal.run_counts import RunCounts
from reactloop.loop.budget import Budget
from reactloop.loop.tree_budget import TreeBudget, count_spent, current_run
from reactloop.messages import Usage
from reactloop.tools.families.calculator import calculator_tool

SUM = {"name": "calculator", "arguments": {"expression": "2 + 2"}}


def _child() -> Agent:
    turns = [
        {"tool_calls": [SUM], "usage": {"input_tokens": 7, "output_tokens": 3}},
        {"content": "4", "usage": {"input_tokens": 11, "output_tokens": 1}},
    ]
    return Agent(ScriptedModel(turns), [calculator_tool()])


def test_the_fold_counts_a_childs_spending_in_its_parent(tmp_path: Path) -> None:
    ask = {"name": "ask", "arguments": {"task": "what is 2 + 2?"}}
    turns = [
        {"tool_calls": [ask], "usage": {"input_tokens": 5, "output_tokens": 2}},
        {"content": "it is 4", "usage": {"input_tokens": 13, "output_tokens": 4}},
    ]
    root = Agent(ScriptedModel(turns), [_child().as_tool("ask", "Ask.")])
    with Journal(tmp_path / "root.jsonl") as journal:
        result = root.run("go", journal=journal)
    assert (result.model_calls, result.tool_calls) == (4, 2)  # the child's 2 and 1 included
    state = fold(read_events(tmp_path / "root.jsonl"))
    counts = state.counts
    assert (counts.model_calls, counts.tool_calls) == (result.model_calls, result.tool_calls)
    assert counts.usage.total_tokens == result.usage.total_tokens == 46


def _tree() -> tuple[Budget, TreeBudget, TreeBudget]:
    lock = threading.RLock()
    root = Budget(Limits(max_model_calls=100, max_tool_calls=100), None)
    child = TreeBudget(Limits(), None, parent=root, lock=lock)
    grandchild = TreeBudget(Limits(), None, parent=child, lock=lock)
    return root, child, grandchild


def test_count_spent_reaches_every_ancestor_once() -> None:
    root, child, grandchild = _tree()
    count_spent(child, 2, 3, Usage(input_tokens=10, output_tokens=5), 0.0)
    assert (child.model_calls, child.tool_calls, child.usage.total_tokens) == (2, 3, 15)
    assert (root.model_calls, root.tool_calls, root.usage.total_tokens) == (2, 3, 15)
    assert (grandchild.model_calls, grandchild.tool_calls) == (0, 0)


def test_a_resumed_childs_spending_before_the_kill_counts_in_its_ancestors() -> None:
    root, child, _ = _tree()
    counts = RunCounts(model_calls=4, tool_calls=2, usage=Usage(input_tokens=30, output_tokens=6))
    grandchild = TreeBudget(Limits(), None, parent=child, lock=child.lock, counts=counts)
    for budget in (grandchild, child, root):
        assert (budget.model_calls, budget.tool_calls, budget.usage.total_tokens) == (4, 2, 36)


def _cut_after(path: Path, last: Callable[[dict[str, Any]], bool]) -> None:
    """The journal as a kill would leave it: its lines up to the first event ``last`` takes."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    keep = next(i for i, line in enumerate(lines) if last(json.loads(line))) + 1
    path.write_text("".join(lines[:keep]), encoding="utf-8")


def test_a_resumed_child_leaves_no_model_call_reserved_in_its_ancestors(tmp_path: Path) -> None:
    """A child killed after its tool ran, resumed with its parent: its answer passes its check
    (``verify``, which looks whether another model call could go, reserving one), and once it
    has stopped no model call of it is still reserved in the root's budget."""
    ask = {"name": "ask", "arguments": {"task": "what is 2 + 2?"}}
    probe = {"name": "reserved", "arguments": {}}

    @tool(read_only=True)
    def reserved() -> int:
        """The model calls the sub-agents of this run hold reserved."""
        run = current_run()
        assert run is not None
        return run.budget.reserved_calls

    def tree() -> Agent:
        child = Agent(ScriptedModel([{"tool_calls": [SUM]}, "4"]), [calculator_tool()], verify=bool)
        root_turns = [{"tool_calls": [ask]}, {"tool_calls": [probe]}, "done"]
        return Agent(ScriptedModel(root_turns), [child.as_tool("ask", "Ask."), reserved])

    trace = tmp_path / "root.jsonl"
    with Journal(trace) as journal:
        assert tree().run("go", journal=journal).answer == "done"
    _cut_after(trace, lambda e: e["type"] == "child_start")  # killed while the child ran
    _cut_after(tmp_path / "root.ask-1.jsonl", lambda e: e["type"] == "tool_result")
    result = tree().resume(trace)
    assert (result.answer, result.stop_reason) == ("done", StopReason.FINAL_ANSWER)
    assert [m.content for m in result.history if m.role == "tool"] == [
        '{"ok": true, "output": {"answer": "4", "stop_reason": "final_answer"}}',
        '{"ok": true, "output": 0}',
    ]
