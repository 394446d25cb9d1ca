"""Token accounting: the quadratic cost model, measured usage, prices, prefix stability."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Agent, FunctionModel, Journal, Limits, ModelRequest, ScriptedModel, tool
from reactloop.cli.trace import cost as cost_command
from reactloop.errors import UsageError
from reactloop.journal.writer import read_journal
from reactloop.messages import Message, ModelTurn, ToolCall, Usage
from reactloop.usage import (
    Price,
    PriceTable,
    check_prefix,
    fit_cost_model,
    predicted_input_tokens,
    usage_report,
)


def test_the_cost_model_figures() -> None:
    assert predicted_input_tokens(1000, 300, 10) == 23_500
    assert predicted_input_tokens(800, 200, 5) == 6_000
    assert predicted_input_tokens(1000, 300, 0) == 0
    with pytest.raises(ValueError):
        predicted_input_tokens(1000, 300, -1)


@given(s=st.integers(0, 10**6), d=st.integers(0, 10**5), n=st.integers(1, 200))
def test_the_model_is_the_sum_of_a_linearly_growing_prompt(s: int, d: int, n: int) -> None:
    steps = [s + d * (k - 1) for k in range(1, n + 1)]
    assert predicted_input_tokens(s, d, n) == sum(steps)
    fitted = fit_cost_model(steps)
    assert fitted is not None
    assert (fitted.system_tokens, fitted.steps) == (s, n)
    assert fitted.step_tokens == (d if n > 1 else 0)  # one step says nothing about growth
    assert fitted.predicted == fitted.measured == sum(steps)


@tool(read_only=True)
def note(n: int) -> str:
    """Return note number n.

    Args:
        n: which note
    """
    return f"note {n}"


def linear_run(tmp_path: Path, s: int, d: int, n: int) -> tuple[Path, Any]:
    """A scripted run of n model calls whose measured input grows by d tokens a step."""
    turns: list[Any] = [
        {
            "tool_calls": [{"name": "note", "arguments": {"n": k}}],
            "usage": {
                "input_tokens": s + d * (k - 1),
                "cached_tokens": s + d * (k - 2) if k > 1 else 0,
                "output_tokens": 30,
                "reasoning_tokens": 10,
            },
        }
        for k in range(1, n)
    ]
    turns.append(
        {"content": "done", "usage": {"input_tokens": s + d * (n - 1), "output_tokens": 5}}
    )
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        result = Agent(
            ScriptedModel(turns, name="openai:gpt-4o-mini"),
            [note],
            journal=journal,
            limits=Limits(max_model_calls=n, wind_down=False),
        ).run("read the notes")
    return trace, result


@pytest.mark.parametrize(
    ("s", "d", "n", "expected"), [(1000, 300, 10, 23_500), (800, 200, 5, 6_000)]
)
def test_model_matches_measured_usage_of_a_scripted_run(
    tmp_path: Path, s: int, d: int, n: int, expected: int
) -> None:
    trace, result = linear_run(tmp_path, s, d, n)
    assert result.answer == "done" and result.model_calls == n
    report = usage_report(trace)
    assert not report.estimated
    assert [step.step for step in report.steps] == list(range(1, n + 1))
    assert [step.usage.input_tokens for step in report.steps] == [s + d * k for k in range(n)]
    assert report.total.input_tokens == result.usage.input_tokens == expected
    assert report.total.reasoning_tokens == 10 * (n - 1)
    assert report.cost_model is not None
    assert report.cost_model.predicted == report.cost_model.measured == expected
    assert report.cost_model.new_tokens == s + d * n
    assert (
        f"{expected:,} input tokens predicted, {expected:,} measured"
        in report.cost_model.describe()
    )


def test_nonlinear_growth_shows_against_the_model() -> None:
    fitted = fit_cost_model([1000, 1100, 5000, 5100, 1400])  # one huge observation, then cut
    assert fitted is not None and fitted.predicted == 5 * 1000 + 100 * 10
    assert fitted.measured == 13_600
    assert "+" in fitted.describe() and "%" in fitted.describe()
    assert fit_cost_model([]) is None
    single = fit_cost_model([700])
    assert single is not None and single.predicted == 700


@given(
    s=st.integers(1, 10**5),
    d=st.integers(0, 5_000),
    t=st.integers(1, 10**4),
    tooled=st.integers(2, 40),
    bare=st.integers(1, 3),
)
def test_calls_without_the_tool_schemas_are_fitted_as_a_smaller_prefix(
    s: int, d: int, t: int, tooled: int, bare: int
) -> None:
    """Calls told to answer now (the last ones of a wound-down run) sent ``T`` tokens of tool
    schemas fewer: the fit finds ``S``, ``d`` and ``T`` again, and predicts the measure."""
    n = tooled + bare
    inputs = [s + d * k - (t if k >= tooled else 0) for k in range(n)]
    flags = [k >= tooled for k in range(n)]
    fitted = fit_cost_model(inputs, without_tools=flags)
    assert fitted is not None
    assert (fitted.system_tokens, fitted.step_tokens) == (s, d)
    assert fitted.tool_tokens == pytest.approx(t)
    assert fitted.without_tools == tuple(range(tooled, n))
    assert fitted.predicted == pytest.approx(fitted.measured)
    assert fitted.call_inputs() == pytest.approx(inputs)


def test_a_call_without_tools_that_is_no_smaller_is_a_call_like_the_others() -> None:
    """A provider that sent the schemas anyway (the call grew like the others): no ``T``."""
    fitted = fit_cost_model([1000, 1300, 1600, 1900], without_tools=[False, False, False, True])
    assert fitted is not None and fitted.without_tools == () and fitted.tool_tokens == 0
    assert fitted.predicted == fitted.measured == 5800
    assert "without the tool schemas" not in fitted.describe()
    one = fit_cost_model([1000, 700], without_tools=[False, True], schema_tokens=400)
    assert one is not None  # one call with tools: no line; T is the schemas' estimated size
    assert (one.tool_tokens, one.step_tokens, one.without_tools) == (400, 100, (1,))
    grew = fit_cost_model([1000, 1100], without_tools=[False, True], schema_tokens=400)
    assert grew is not None and grew.without_tools == () and grew.step_tokens == 100


def wound_down_run(tmp_path: Path, s: int, d: int, t: int, n: int) -> Path:
    """A scripted run of ``n`` calls whose input grows by ``d`` a step; the last call, told to
    answer now, went out without ``t`` tokens of tool schemas (as some servers send it)."""
    turns: list[Any] = [
        {
            "tool_calls": [{"name": "note", "arguments": {"n": k}}],
            "usage": {"input_tokens": s + d * k, "output_tokens": 30},
        }
        for k in range(n - 1)
    ]
    turns.append({"content": "done", "usage": {"input_tokens": s + d * (n - 1) - t}})
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        result = Agent(
            ScriptedModel(turns, name="openai:gpt-4o-mini"),
            [note],
            journal=journal,
            limits=Limits(max_model_calls=n),
        ).run("read the notes")
    assert result.forced and result.answer == "done"
    return trace


def test_the_forced_last_call_does_not_skew_the_cost_model(tmp_path: Path) -> None:
    report = usage_report(wound_down_run(tmp_path, s=900, d=120, t=600, n=4))
    assert [s.without_tools for s in report.steps] == [False, False, False, True]
    model = report.cost_model
    assert model is not None
    assert (model.system_tokens, model.step_tokens, model.tool_tokens) == (900, 120, 600)
    assert model.predicted == model.measured == 4 * 900 + 120 * 6 - 600
    line = model.describe()
    assert "d≈120, 1 call without the tool schemas (T≈600)" in line and "(+0.0%)" in line
    assert model.to_dict()["without_tools"] == [3]


def test_prices_by_exact_name_provider_glob_and_prefix() -> None:
    table = PriceTable.from_dict(
        {
            "gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6},
            "gpt-4o*": {"input": 2.5, "output": 10},
            "deepseek": {"input": 0.27, "cached_input": 0.07, "output": 1.1},
        }
    )
    assert table.lookup("gpt-4o-mini") == ("gpt-4o-mini", table.prices["gpt-4o-mini"])
    assert table.lookup("openai:gpt-4o-mini") is not None
    assert table.lookup("openai:gpt-4o-mini")[0] == "gpt-4o-mini"  # type: ignore[index]
    assert table.lookup("gpt-4o-2024-08-06")[0] == "gpt-4o*"  # type: ignore[index]
    assert table.lookup("deepseek-chat")[0] == "deepseek"  # type: ignore[index]
    assert table.lookup("claude-3-haiku") is None
    assert table.prices["gpt-4o*"].cached_input == 2.5  # no cached rate: the input rate


def test_money_counts_cached_input_at_its_rate() -> None:
    price = Price(input=2.0, cached_input=0.5, output=8.0)
    usage = Usage(input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000)
    assert price.cost(usage) == pytest.approx(0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 8.0)


def test_report_prices_the_run(tmp_path: Path) -> None:
    trace, _ = linear_run(tmp_path, 1000, 300, 10)
    prices = PriceTable.from_dict(
        {"gpt-4o-mini": {"input": 1.0, "cached_input": 0.25, "output": 4.0}}
    )
    report = usage_report(trace, prices=prices)
    total = report.total
    fresh = total.input_tokens - total.cached_tokens
    expected = (fresh * 1.0 + total.cached_tokens * 0.25 + total.output_tokens * 4.0) / 1e6
    assert report.price_name == "gpt-4o-mini" and report.money == pytest.approx(expected)
    assert usage_report(trace, prices=PriceTable.from_dict({})).money is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "expected an object"),
        ('{"m": 3}', "expected {"),
        ('{"m": {"input": 1}}', "missing 'output'"),
        ('{"m": {"input": 1, "output": -2}}', "must not be negative"),
        ('{"m": {"input": "1", "output": 2}}', "must be a number"),
        ('{"m": {"input": 1, "output": 2, "cache_input": 1}}', "unknown key 'cache_input'"),
    ],
)
def test_bad_price_tables_are_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        PriceTable.from_file(path)


def test_missing_price_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read price table"):
        PriceTable.from_file(tmp_path / "absent.json")


def test_an_append_only_run_has_a_stable_prefix(tmp_path: Path) -> None:
    trace, _ = linear_run(tmp_path, 1000, 300, 5)
    assert check_prefix(read_journal(trace)) == []
    assert usage_report(trace).prefix_issues == ()


def test_prefix_check_fires_on_a_mutated_history(tmp_path: Path) -> None:
    """A model (standing in for context management) rewrites an earlier message mid-run."""

    def rewriting_model(request: ModelRequest) -> ModelTurn:
        if request.step == 2:
            history: Any = request.messages
            history.replace(1, Message(role="user", content="a shorter task", kind="task"))
        if request.step < 3:
            return ModelTurn(
                tool_calls=(
                    ToolCall(
                        id=f"c{request.step}",
                        name="note",
                        arguments=json.dumps({"n": request.step}),
                    ),
                )
            )
        return ModelTurn(text="done")

    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(FunctionModel(rewriting_model), [note], journal=journal).run("read two notes")
    issues = check_prefix(read_journal(trace))
    assert [(i.step, i.index) for i in issues] == [(3, 1)]
    assert usage_report(trace).prefix_issues == tuple(issues)


def test_prefix_check_reads_the_request_counts(tmp_path: Path) -> None:
    def request(step: int, count: int, new: int) -> dict[str, Any]:
        return {
            "type": "request",
            "step": step,
            "n_messages": count,
            "messages_new": [{"role": "user", "content": "x"}] * new,
        }

    appended = [request(1, 2, 2), request(2, 4, 2), request(3, 6, 2)]
    assert check_prefix(appended) == []
    shrank = [request(1, 2, 2), request(2, 4, 2), request(3, 3, 1)]
    [issue] = check_prefix(shrank)
    assert issue.step == 3 and "shrank from 4 to 3" in issue.message
    rewritten = [request(1, 2, 2), request(2, 4, 2), request(3, 6, 4)]
    [issue] = check_prefix(rewritten)
    assert issue.step == 3 and issue.index == 2 and "no longer the same prefix" in issue.message


def test_tokens_are_estimated_when_the_provider_reports_none(tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "note", "arguments": {"n": k}}]} for k in range(4)]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel([*turns, "done"]), [note], journal=journal).run("notes")
    report = usage_report(trace)
    assert report.estimated
    inputs = [s.usage.input_tokens for s in report.steps]
    assert inputs == sorted(inputs) and inputs[0] > 0 and len(set(inputs)) == len(inputs)
    assert report.to_dict()["estimated"] is True


def test_cost_command(tmp_path: Path) -> None:
    trace, _ = linear_run(tmp_path, 1000, 300, 10)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"gpt-4o*": {"input": 1, "output": 4}}), encoding="utf-8")
    runner = CliRunner()
    table = runner.invoke(cost_command, [str(trace), "--prices", str(prices)])
    assert table.exit_code == 0, table.output
    assert "23,500" in table.output and "cost: $" in table.output
    as_json = runner.invoke(cost_command, [str(trace), "--json"])
    assert json.loads(as_json.output)["cost_model"]["predicted"] == 23_500
    prices.write_text("{", encoding="utf-8")
    bad = runner.invoke(cost_command, [str(trace), "--prices", str(prices)])
    assert bad.exit_code == 2 and "not JSON" in bad.output
