"""``reactloop cost`` on compacted runs: each compaction's tokens before and after, the summary
call's own tokens and money, the cache miss of the rewritten prefix on the next call; and the
prefix check takes a compaction for what it is, not for an unexplained break.

The runs are those of ``test_compaction.py``: the fake OpenAI server over HTTP, whose model
reports as cached the prefix it saw in the request before, as a provider's cache would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction_runs import run as compacted_run
from reactloop.cli.trace import cost as cost_command
from reactloop.messages import Usage
from reactloop.usage import Price, PriceTable, check_prefix, usage_from, usage_report

PRICE = Price(input=2.5, cached_input=0.25, output=10.0)


def next_turn(events: list[dict[str, Any]], index: int) -> dict[str, Any]:
    return next(e for e in events[index + 1 :] if e["type"] == "turn")


@pytest.mark.parametrize("policy", ["trim", "summarize"])
def test_each_compaction_is_reported_with_its_cache_cost(policy: str, tmp_path: Path) -> None:
    _, _, events = compacted_run("openai", policy, tmp_path)
    report = usage_report(events, prices=PriceTable({"fake": PRICE}))
    done = [(i, e) for i, e in enumerate(events) if e["type"] == "compaction"]
    assert len(report.compactions) == len(done) >= 2
    for cost, (index, event) in zip(report.compactions, done, strict=True):
        assert (cost.step, cost.policy, cost.start) == (event["step"], policy, event["start"])
        assert (cost.tokens_before, cost.tokens_after) == (
            event["tokens_before"],
            event["tokens_after"],
        )
        assert cost.tokens_after is not None and cost.tokens_before is not None
        assert cost.tokens_after < cost.tokens_before
        # The next call re-reads, uncached, what the provider measured: the block and after.
        following = usage_from(next_turn(events, index)["turn"]["usage"])
        assert cost.next_call == following
        assert cost.measured_miss == following.input_tokens - following.cached_tokens > 0
        assert cost.rewritten_tokens is not None and cost.rewritten_tokens > 0
        missed = cost.measured_miss
        extra = missed * (PRICE.input - PRICE.cached_input) / 1e6
        assert cost.miss_money == pytest.approx(extra)
        if policy == "summarize":
            assert cost.summary_usage == usage_from(event["summary_usage"])
            assert cost.summary_money == pytest.approx(PRICE.cost(cost.summary_usage))
        else:
            assert cost.summary_usage is None and cost.summary_money is None


def test_a_summary_call_counts_in_the_total_and_the_money(tmp_path: Path) -> None:
    result, _, events = compacted_run("openai", "summarize", tmp_path)
    report = usage_report(events, prices=PriceTable({"fake": PRICE}))
    summaries = [c.summary_usage for c in report.compactions if c.summary_usage is not None]
    turns = sum((s.usage for s in report.steps), Usage())
    assert report.total == sum(summaries, turns) == result.usage
    assert len(report.steps) + len(summaries) == result.model_calls
    assert report.money == pytest.approx(PRICE.cost(report.total))


@pytest.mark.parametrize("remind", [False, True])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("policy", ["trim", "summarize"])
def test_a_compaction_is_not_an_unexplained_prefix_break(
    policy: str, provider: str, remind: bool, tmp_path: Path
) -> None:
    _, _, events = compacted_run(provider, policy, tmp_path, remind=remind)
    assert [e for e in events if e["type"] == "compaction"]
    assert check_prefix(events) == []
    assert usage_report(events).prefix_issues == ()


def test_without_its_compaction_events_a_summarised_run_has_breaks(tmp_path: Path) -> None:
    """The check sees a summary's block (fewer messages): it is the compaction event that
    explains it. (A trim keeps the count, so the request counts alone never showed it.)"""
    _, _, events = compacted_run("openai", "summarize", tmp_path)
    stripped = [e for e in events if e["type"] != "compaction"]
    issues = check_prefix(stripped)
    assert {i.step for i in issues} == {e["step"] + 1 for e in events if e["type"] == "compaction"}
    assert all("shrank" in i.message for i in issues)


def test_a_compaction_does_not_hide_a_rewrite_it_does_not_explain(tmp_path: Path) -> None:
    _, _, events = compacted_run("openai", "summarize", tmp_path)
    first = next(i for i, e in enumerate(events) if e["type"] == "compaction")
    request = next(i for i in range(first, len(events)) if events[i]["type"] == "request")
    forged = [dict(e) for e in events]
    forged[request]["n_messages"] += 1  # one message more than the block and the new ones
    issues = check_prefix(forged)
    assert issues and issues[0].step == events[request]["step"]
    assert "no longer the same prefix" in issues[0].message


def test_cost_command_prints_each_compaction(tmp_path: Path) -> None:
    _, _, events = compacted_run("openai", "summarize", tmp_path)
    trace = tmp_path / "openai-summarize.jsonl"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"fake": {"input": 2.5, "cached_input": 0.25, "output": 10}}))
    runner = CliRunner()
    printed = runner.invoke(cost_command, [str(trace), "--prices", str(prices)], terminal_width=200)
    assert printed.exit_code == 0, printed.output
    done = [e for e in events if e["type"] == "compaction"]
    lines = printed.output.splitlines()
    heads = [line for line in lines if line.startswith("compaction after step")]
    assert len(heads) == len(done)
    assert f"~{done[0]['tokens_before']:,} → ~{done[0]['tokens_after']:,} tokens" in heads[0]
    assert sum("summary call:" in line for line in lines) == len(done)
    assert sum("more than a cache hit" in line for line in lines) == len(done)
    assert "prefix changed" not in printed.output
    as_json = json.loads(runner.invoke(cost_command, [str(trace), "--json"]).output)
    assert [c["tokens_after"] for c in as_json["compactions"]] == [e["tokens_after"] for e in done]
