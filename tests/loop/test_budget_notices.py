"""Budget notices (on by default): one line after the observations, before the next model call,
when less than a quarter of a budget is left — model calls, tool calls, tokens, time, money —
once per budget, without rewriting an earlier message."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    ModelTurn,
    ScriptedModel,
    ToolCall,
    tool,
)
from reactloop.cli.app import main
from reactloop.journal.writer import read_journal
from reactloop.loop.budget import Budget, BudgetNotices
from reactloop.messages import Usage
from reactloop.models.base import ModelRequest
from reactloop.models.openai.request import render_history
from reactloop.usage import Price


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


def lines_seen(requests: Sequence[ModelRequest | Sent]) -> list[tuple[int, str]]:
    """(model call, line) for each budget notice, at the call that first saw it."""
    seen: list[tuple[int, str]] = []
    known: set[int] = set()
    for number, request in enumerate(requests, 1):
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
    model, result = run(max_model_calls=12, max_tool_calls=20)
    # After 8 steps 4 of 20 tool calls are left; after 10 steps 2 of 12 model calls.
    assert lines_seen(model.requests) == [
        (9, "budget: 4 tool calls left"),
        (11, "budget: 2 model calls left"),
    ]
    notices = [m for m in result.history if m.content.startswith("budget:")]
    assert [m.kind for m in notices] == ["notice", "notice"]


def test_notices_can_be_turned_off() -> None:
    model, result = run(max_model_calls=12, max_tool_calls=20, budget_notices=False)
    assert lines_seen(model.requests) == []
    _, with_notices = run(max_model_calls=12, max_tool_calls=20)
    assert len(result.history) == len(with_notices.history) - 2  # the same run otherwise
    assert (result.stop_reason, result.tool_calls) == (
        with_notices.stop_reason,
        with_notices.tool_calls,
    )


@pytest.mark.parametrize("flag", [[], ["--no-budget-notices"]])
def test_the_cli_has_them_on_and_no_budget_notices_turns_them_off(
    flag: list[str], tmp_path: Path
) -> None:
    steps = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": f"2+{n}"}}]}
        for n in range(4)
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*steps, "5"]))
    trace = tmp_path / "run.jsonl"
    command = ["run", "2+3?", "--model", f"scripted:{script}", "--tools", "calculator"]
    command += ["--max-tool-calls", "5", "--trace", str(trace), *flag]
    outcome = CliRunner().invoke(main, command)
    assert outcome.exit_code == 0, outcome.output
    records = read_journal(trace)
    assert records[0]["limits"]["budget_notices"] is not bool(flag)
    lines = [r["line"] for r in records if r["type"] == "budget_notice"]
    assert lines == ([] if flag else ["budget: 1 tool call left"])  # 4 of 5 calls spent


def test_the_last_model_call_is_announced_by_the_wind_down_notice_alone() -> None:
    model, _ = run(max_model_calls=8, max_tool_calls=40)  # a quarter of 8: only 1 left
    last = model.requests[-1].messages
    assert lines_seen(model.requests) == []
    assert last[-1].kind == "wind_down" and "last step" in last[-1].content
    model, _ = run(max_model_calls=8, max_tool_calls=40, wind_down=False)
    assert lines_seen(model.requests) == [(8, "budget: 1 model call left")]


class Clock:
    """``time.monotonic`` for the run: it moves only when the model says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def five_budgets_model(clock: Clock) -> FunctionModel:
    """Each budget crosses its quarter at its own call: time after call 2 (800 of 1,000 s),
    tokens after call 4 (8,000 input), money after call 7 ($80 of output), tool calls after
    call 10 (22 in one batch, 31 of 40), model calls after call 16 (4 of 20 left)."""

    def reply(request: ModelRequest) -> ModelTurn:
        call = request.step
        if call == 20:
            return ModelTurn(text="done", usage=Usage(input_tokens=10))
        clock.now += 800.0 if call == 2 else 0.0
        usage = Usage(input_tokens=8000 if call == 4 else 10, output_tokens=80 if call == 7 else 0)
        batch = 22 if call == 10 else 1
        calls = tuple(
            ToolCall(id=f"c{call}_{i}", name="probe", arguments=json.dumps({"n": 100 * call + i}))
            for i in range(batch)
        )
        return ModelTurn(tool_calls=calls, usage=usage)

    return FunctionModel(reply)


def test_all_five_budgets_are_announced_once_each_at_the_call_after_they_cross(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(time, "monotonic", clock)
    sent: list[Sent] = []
    model = five_budgets_model(clock)
    inner = model.function
    model.function = lambda request: (sent.append(Sent(request)), inner(request))[1]
    limits = Limits(
        max_model_calls=20,
        max_tool_calls=40,
        max_tokens=10_000,
        max_cost=100.0,
        max_seconds=1000.0,
        wind_down=False,
    )
    price = Price(input=0.0, cached_input=0.0, output=1e6)  # $1 an output token
    with Journal(tmp_path / "run.jsonl") as journal:
        result = Agent(model, [probe], limits=limits, price=price, journal=journal).run("go")
    assert result.stop_reason == "final_answer", result.error
    assert lines_seen(sent) == [
        (3, "budget: 200 s left"),
        (5, "budget: 1970 tokens left"),
        (8, "budget: $20.00 left"),
        (11, "budget: 9 tool calls left"),
        (17, "budget: 4 model calls left"),
    ]
    for number, _ in lines_seen(sent):  # after the observations, as the last message
        messages = sent[number - 1].messages
        assert messages[-1].content.startswith("budget:") and messages[-2].role == "tool"
    journaled = [
        e["line"] for e in read_journal(tmp_path / "run.jsonl") if e["type"] == "budget_notice"
    ]
    assert journaled == [line for _, line in lines_seen(sent)]
    assert_every_request_extends_the_one_before(sent)


class Sent:
    """A request as the model got it: its messages then, and their OpenAI wire rendering."""

    def __init__(self, request: ModelRequest) -> None:
        self.messages = tuple(request.messages)  # the request holds the live history
        self.wire = json.dumps(render_history(list(self.messages)))


def assert_every_request_extends_the_one_before(sent: list[Sent]) -> None:
    """A notice is appended: the previous prompt is the same messages, and on the wire the
    same bytes, at the start of the next."""
    for before, after in itertools.pairwise(sent):
        assert after.messages[: len(before.messages)] == before.messages
        assert after.wire.startswith(before.wire[:-1])  # the same JSON array, extended


def test_tokens_time_and_money_have_their_line() -> None:
    class Pricer:
        def cost(self, usage: Usage) -> float:
            return usage.total_tokens / 1000

    limits = Limits(max_tokens=1000, max_cost=1.0, max_seconds=600.0)
    budget = Budget(limits, Pricer())
    notices = BudgetNotices(budget)
    assert notices.line() is None
    budget.record_model_call(Usage(input_tokens=700, output_tokens=100))
    assert notices.line() == "budget: 200 tokens, $0.20 left"
    assert notices.line() is None  # once each
    budget.started -= 500  # 100 of 600 seconds left
    line = notices.line()
    assert line is not None and re.fullmatch(r"budget: (99|100) s left", line)
    assert notices.line() is None
