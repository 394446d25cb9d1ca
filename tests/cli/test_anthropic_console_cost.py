"""What the console and ``reactloop cost`` print of an Anthropic run with extended thinking and
prompt caching, through the CLI against the fake Anthropic server: thinking (redacted thinking
as one short placeholder line) before each step's action, streamed or not, and a cost table
with a cache-write column, which runs without cache writes do not get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from anthropic_runs import RED_2, RED_3, THOUGHT, anthropic_run, openai_cached_run
from reactloop.cli import main

PLACEHOLDER = "redacted by the provider: 28 bytes of opaque data, echoed back unchanged"
BOTH = len(RED_2["data"]) + len(RED_3["data"])
# Claude Sonnet 4.x list prices, $ per million tokens: cache writes (5 min) 1.25x input,
# cache reads 0.1x.
PRICES = {
    "claude-sonnet-4*": {"input": 3.0, "cache_write": 3.75, "cached_input": 0.3, "output": 15}
}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_console_prints_thinking_and_a_line_for_redacted_thinking(
    tmp_path: Path, stream: bool
) -> None:
    _, err, _ = anthropic_run(tmp_path, *(["--stream"] if stream else []))
    lines = err.splitlines()
    step_1, step_2 = lines.index("Step 1"), lines.index("Step 2")
    assert lines[step_1 + 1 : step_1 + 4] == [
        f"  thinking: {THOUGHT}",
        f"  thinking: {PLACEHOLDER}",
        '  Act     calculator({"expression": "2+3"})',
    ]
    final = [f"  thinking: 2 blocks redacted by the provider: {BOTH:,} bytes of opaque data, "
             "echoed back unchanged"]  # fmt: skip
    # a streamed answer is printed as it comes, its reasoning after it
    expected = ["  Reply   5", *final] if stream else final
    assert lines[step_2 + 1 : step_2 + 1 + len(expected)] == expected
    assert sum("redacted by the provider" in line for line in lines) == 2


def table_rows(output: str) -> list[list[str]]:
    """The cells of each row of a printed rich table (header first)."""
    rows = [line.strip("│┃ ").split("│") for line in output.splitlines() if "│" in line]
    rows = [[cell.strip() for cell in row] for row in rows]
    head = [line for line in output.splitlines() if "┃" in line]
    return [[cell.strip() for cell in head[0].strip("┃ ").split("┃")], *rows] if head else rows


def test_cost_prints_a_cache_write_column_and_prices_writes(tmp_path: Path) -> None:
    trace, _, _ = anthropic_run(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    printed = CliRunner().invoke(
        main, ["cost", str(trace), "--prices", str(prices)], terminal_width=200
    )
    assert printed.exit_code == 0, printed.stderr
    assert table_rows(printed.stdout) == [
        ["call", "step", "input", "cached", "cache write", "output", "reasoning"],
        ["1", "1", "2,005", "0", "2,000", "10", "0"],
        ["2", "2", "2,037", "2,000", "30", "4", "0"],
        ["total", "", "4,042", "2,000", "2,030", "14", "0"],
    ]
    # 12 fresh input x $3 + 2,000 read x $0.30 + 2,030 written x $3.75 + 14 output x $15
    money = (12 * 3.0 + 2000 * 0.3 + 2030 * 3.75 + 14 * 15) / 1e6
    assert f"cost: ${money:.6f} (price claude-sonnet-4*)" in printed.stdout


def test_cost_of_a_run_without_cache_writes_keeps_its_columns(tmp_path: Path) -> None:
    trace = openai_cached_run(tmp_path)
    printed = CliRunner().invoke(main, ["cost", str(trace)], terminal_width=200)
    assert printed.exit_code == 0, printed.stderr
    assert table_rows(printed.stdout) == [
        ["call", "step", "input", "cached", "output", "reasoning"],
        ["1", "1", "40", "32", "6", "0"],
        ["2", "2", "40", "32", "6", "0"],
        ["total", "", "80", "64", "12", "0"],
    ]
