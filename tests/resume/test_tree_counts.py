"""A tree's spending across a resume: what a sub-agent spent counts in its parent, also when
the parent's state is folded from its journal (``child_stop``), when a killed child is resumed
(``TreeBudget.restore``), and when a child's recorded outcome stands (``count_spent``)."""

from __future__ import annotations

import threading
from pathlib import Path

from reactloop import Agent, Journal, Limits, ScriptedModel
from reactloop.journal.fold import fold
from reactloop.journal.reader import read_events
from reactloop.journal.run_state import RunState
from reactloop.loop.budget import Budget
from reactloop.loop.tree_budget import TreeBudget, count_spent
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
    assert (state.model_calls, state.tool_calls) == (result.model_calls, result.tool_calls)
    assert state.usage.total_tokens == result.usage.total_tokens == 46


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
    root, child, grandchild = _tree()
    state = RunState()
    state.model_calls, state.tool_calls = 4, 2
    state.usage = Usage(input_tokens=30, output_tokens=6)
    grandchild.restore(state)
    for budget in (grandchild, child, root):
        assert (budget.model_calls, budget.tool_calls, budget.usage.total_tokens) == (4, 2, 36)
