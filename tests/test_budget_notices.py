"""Budget notices: one line before the next model call when less than a quarter of a budget is
left, once per budget, and nothing when they are off (the default)."""

from __future__ import annotations

import json
import re
from typing import Any

from reactloop import Agent, Limits, ModelTurn, ScriptedModel, ToolCall, tool
from reactloop.limits import Budget, BudgetNotices
from reactloop.messages import Usage


@tool(read_only=True)
def probe(n: int) -> int:
    """Return n."""
    return n


def two_calls(step: int) -> ModelTurn:
    calls = tuple(
        ToolCall(id=f"c{step}_{i}", name="probe", arguments=json.dumps({"n": 2 * step + i}))
        for i in (0, 1)
    )
    return ModelTurn(tool_calls=calls)


def lines_seen(model: ScriptedModel) -> list[tuple[int, str]]:
    """(model call, line) for each budget notice, at the call that first saw it."""
    seen: list[tuple[int, str]] = []
    known: set[int] = set()
    for number, request in enumerate(model.requests, 1):
        for index, message in enumerate(request.messages):
            if message.content.startswith("budget:") and index not in known:
                known.add(index)
                seen.append((number, message.content))
    return seen


def run(**limits: Any) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel([two_calls(step) for step in range(1, 12)] + ["done"])
    agent = Agent(model, [probe], limits=Limits(max_seconds=None, **limits))
    return model, agent.run("probe")


def test_each_budget_is_announced_once_when_less_than_a_quarter_is_left() -> None:
    model, result = run(max_model_calls=12, max_tool_calls=20, budget_notices=True)
    # After 8 steps 4 of 20 tool calls are left; after 10 steps 2 of 12 model calls.
    assert lines_seen(model) == [
        (9, "budget: 4 tool calls left"),
        (11, "budget: 2 model calls left"),
    ]
    notices = [m for m in result.history if m.content.startswith("budget:")]
    assert [m.kind for m in notices] == ["notice", "notice"]


def test_notices_are_off_by_default() -> None:
    model, _ = run(max_model_calls=12, max_tool_calls=20)
    assert lines_seen(model) == []


def test_tokens_time_and_money_have_their_line() -> None:
    class Price:
        def cost(self, usage: Usage) -> float:
            return usage.total_tokens / 1000

    limits = Limits(max_tokens=1000, max_cost=1.0, max_seconds=600.0, budget_notices=True)
    budget = Budget(limits, Price())
    notices = BudgetNotices(budget)
    assert notices.line() is None
    budget.record_model_call(Usage(input_tokens=700, output_tokens=100))
    assert notices.line() == "budget: 200 tokens, $0.20 left"
    assert notices.line() is None  # once each
    budget.started -= 500  # 100 of 600 seconds left
    line = notices.line()
    assert line is not None and re.fullmatch(r"budget: (99|100) s left", line)
    assert notices.line() is None
