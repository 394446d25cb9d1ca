"""What a user sees of an Anthropic run, through the CLI against the fake Anthropic server: a
refusal and its reason, the one warning of a prompt too short to cache, thinking shown as
reasoning (console and viewer), and cache writes and reads priced by ``reactloop cost``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from anthropic_cached_usage import FIRST, SECOND
from reactloop import Usage, read_journal
from reactloop.cli import main
from reactloop.errors import UsageError
from reactloop.testing import FakeAnthropicServer, message, thinking, tool_use
from reactloop.testing.anthropic_replies import anthropic_fixture_replies
from reactloop.usage import PriceTable
from reactloop.viewer import render_html

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
MODEL = "anthropic:claude-sonnet-4-6"
REASON = "the model refused (cyber): This request was refused due to policy."


def cli_run(script: list[Any], *args: str) -> tuple[int, str, str, FakeAnthropicServer]:
    with FakeAnthropicServer(script) as server:
        result = CliRunner().invoke(
            main, ["run", "2+3?", "--model", MODEL, "--base-url", server.base_url, *args]
        )
    return result.exit_code, result.stdout, result.stderr, server


def warnings_of(trace: Path, kind: str) -> list[str]:
    return [
        e["message"] for e in read_journal(trace) if e["type"] == "warning" and e["kind"] == kind
    ]


@pytest.mark.parametrize("name", ["anthropic_refusal.json", "anthropic_stream_refusal.jsonl"])
def test_a_refusal_stops_with_content_filter_and_says_why(tmp_path: Path, name: str) -> None:
    trace = tmp_path / "run.jsonl"
    script = anthropic_fixture_replies(WIRE / name)
    stream = ["--stream"] if name.endswith(".jsonl") else []
    code, out, err, _ = cli_run(script, "--trace", str(trace), *stream)
    assert code == 1 and out == ""
    (no_answer,) = [line for line in err.splitlines() if line.startswith("No answer")]
    assert REASON in no_answer and "content filter" in no_answer
    assert "stop: content_filter" in err
    assert warnings_of(trace, "refusal") == [REASON]
    events = read_journal(trace)
    (turn,) = [e["turn"] for e in events if e["type"] == "turn"]
    assert turn["finish_reason"] == "content_filter" and turn["text"] == REASON
    (stop,) = [e for e in events if e["type"] == "stop"]
    assert stop["stop_reason"] == "content_filter"
    assert stop["error"] == f"the provider's content filter stopped the reply: {REASON}"
    assert no_answer.count(REASON) == 1


def test_a_refusal_in_json_output_carries_the_reason_in_its_warnings() -> None:
    code, out, _, _ = cli_run(anthropic_fixture_replies(WIRE / "anthropic_refusal.json"), "--json")
    payload = json.loads(out)
    assert code == 1 and payload["stop_reason"] == "content_filter"
    assert payload["warnings"] == [f"refusal: {REASON}"]
    assert payload["error"].endswith(REASON)


def test_cache_with_a_short_prefix_warns_once_in_the_journal_and_on_the_console(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "run.jsonl"
    short = {"input_tokens": 300, "output_tokens": 5}
    script = [
        message(content=[tool_use("calculator", {"expression": "2+3"})], usage=short),
        message(content=[tool_use("calculator", {"expression": "5*1"})], usage=short),
        message("5", usage={**short, "input_tokens": 360}),
    ]
    code, out, err, server = cli_run(script, "--cache", "--trace", str(trace))
    assert code == 0 and out.strip() == "5", err
    assert len(server.requests) == 3
    assert all("cache_control" in json.dumps(r.json) for r in server.requests)
    (warning,) = warnings_of(trace, "cache_too_short")  # three short replies, one warning
    assert "the prompt has 300 tokens" in warning and "at least 1024 tokens" in warning
    assert err.count("cache_too_short") == 1 and "the prompt has 300 tokens" in err


def test_no_cache_warning_once_the_cache_is_written(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    written = {"input_tokens": 5, "cache_creation_input_tokens": 1500, "output_tokens": 5}
    code, _, err, _ = cli_run([message("5", usage=written)], "--cache", "--trace", str(trace))
    assert code == 0 and warnings_of(trace, "cache_too_short") == [] and "cache_too" not in err
    assert "written to the cache 1500" in err  # the summary line counts the cache write


THOUGHT_1 = "I should add 2 and 3 with the calculator."
THOUGHT_2 = "The calculator said 5, so that is the answer."


def thinking_script() -> list[Any]:
    return [
        message(
            content=[thinking(THOUGHT_1, "sig-1"), tool_use("calculator", {"expression": "2+3"})]
        ),
        message(content=[thinking(THOUGHT_2, "sig-2")], text="5"),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_thinking_is_shown_as_reasoning_on_the_console(tmp_path: Path, stream: bool) -> None:
    flags = ["--thinking", "2048", "--no-trace", *(["--stream"] if stream else [])]
    code, out, err, server = cli_run(thinking_script(), *flags)
    assert code == 0 and out.strip() == "5", err
    lines = err.splitlines()
    first = lines.index(f"  thinking: {THOUGHT_1}")
    assert lines[first + 1].startswith("  Act     calculator")  # its reasoning, then the call
    assert f"  thinking: {THOUGHT_2}" in lines
    echoed = server.requests[1].json["messages"][1]["content"][0]
    assert echoed == thinking(THOUGHT_1, "sig-1")


def test_the_viewer_shows_thinking_as_each_steps_reasoning(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    code, _, err, _ = cli_run(thinking_script(), "--thinking", "2048", "--trace", str(trace))
    assert code == 0, err
    page = render_html(trace)
    for thought in (THOUGHT_1, THOUGHT_2):
        assert f"<summary>Reasoning</summary><pre>{thought}</pre>" in page


# Claude Sonnet 4.x list prices, $ per million tokens: cache writes (5 min) 1.25x input,
# cache reads 0.1x.
PRICES = {
    "claude-sonnet-4*": {"input": 3.0, "cache_write": 3.75, "cached_input": 0.3, "output": 15}
}


def test_cost_prices_cache_writes_and_reads(tmp_path: Path) -> None:
    trace, prices = tmp_path / "run.jsonl", tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    script = [
        message(content=[tool_use("calculator", {"expression": "2+3"})], usage=FIRST),
        message("5", usage=SECOND),
    ]
    code, _, err, _ = cli_run(script, "--cache", "--trace", str(trace), "--prices", str(prices))
    assert code == 0, err
    result = CliRunner().invoke(main, ["cost", str(trace), "--prices", str(prices), "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    total = report["total"]
    assert (total["input_tokens"], total["cached_tokens"]) == (2005 + 2037, 2000)
    assert (total["cache_write_tokens"], total["output_tokens"]) == (2030, 14)
    # 12 fresh input x $3 + 2,000 read x $0.30 + 2,030 written x $3.75 + 14 output x $15
    expected = (12 * 3.0 + 2000 * 0.3 + 2030 * 3.75 + 14 * 15) / 1e6
    assert expected == pytest.approx(0.0084585, abs=1e-15)
    assert report["money"] == pytest.approx(expected, abs=1e-15)
    assert report["price"] == "claude-sonnet-4*"
    (stop,) = [e for e in read_journal(trace) if e["type"] == "stop"]
    assert stop["cost"] == pytest.approx(expected, abs=1e-15)  # the run priced itself alike


def test_a_price_without_cache_write_bills_writes_as_input() -> None:
    usage = Usage(input_tokens=1_000_000, cached_tokens=250_000, cache_write_tokens=500_000)
    plain = PriceTable.from_dict({"m": {"input": 2.0, "cached_input": 0.5, "output": 1.0}})
    assert plain.prices["m"].cost(usage) == pytest.approx(250_000 * 2e-6 + 250_000 * 0.5e-6 + 1.0)
    with pytest.raises(UsageError, match="cache_write must not be negative"):
        PriceTable.from_dict({"m": {"input": 1, "output": 1, "cache_write": -1}})
    with pytest.raises(UsageError, match="keys are input, cached_input, cache_write, output"):
        PriceTable.from_dict({"m": {"input": 1, "output": 1, "cache_read": 1}})
    assert Usage.from_dict(usage.to_dict()) == usage
