"""Speed of the journal, the accounting, the viewer and replay on a long scripted run.

    python benchmarks/bench_trace.py [--steps 200] [--repeat 5]

Prints the median of each measurement; figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel
from reactloop.journal.events import Event
from reactloop.replay import replay
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools
from reactloop.usage import usage_report
from reactloop.viewer import render_html


def median_seconds(action: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def scripted_run(path: Path, steps: int) -> None:
    turns: list[Any] = [
        {
            "content": f"Step {k}: compute.",
            "tool_calls": [{"name": "calculator", "arguments": {"expression": f"{k} * 7"}}],
            "usage": {
                "input_tokens": 1000 + 300 * k,
                "cached_tokens": 1000 + 300 * (k - 1),
                "output_tokens": 40,
            },
        }
        for k in range(steps - 1)
    ]
    turns.append({"content": "done", "usage": {"input_tokens": 1000 + 300 * steps}})
    tools = build_tools(("calculator",), ToolContext())
    limits = Limits(max_model_calls=steps, max_tool_calls=steps, wind_down=False, max_seconds=None)
    with Journal(path) as journal:
        Agent(
            ScriptedModel(turns),
            tools,
            journal=journal,
            limits=limits,
            config={"tools": ["calculator"]},
        ).run("compute")


def journal_lines(path: Path, count: int, fsync: bool) -> None:
    data = {
        "result": {"call_id": "c", "name": "t", "ok": True, "output": "x" * 200},
        "content": "{}",
    }
    with Journal(path, fsync=fsync) as journal:
        for step in range(count):
            journal(Event(type="tool_result", step=step, data=data))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "run.jsonl"
        lines = Path(folder) / "lines.jsonl"
        figures = {
            "journal: 1000 lines, no fsync": median_seconds(
                lambda: journal_lines(lines, 1000, False), args.repeat
            ),
            "journal: 200 lines, fsync": median_seconds(
                lambda: journal_lines(lines, 200, True), args.repeat
            ),
            f"run of {args.steps} steps, journaled": median_seconds(
                lambda: scripted_run(trace, args.steps), args.repeat
            ),
            f"usage_report ({args.steps} steps)": median_seconds(
                lambda: usage_report(trace), args.repeat
            ),
            f"render_html ({args.steps} steps)": median_seconds(
                lambda: render_html(trace), args.repeat
            ),
            f"replay ({args.steps} steps)": median_seconds(lambda: replay(trace), args.repeat),
        }
        size = len(render_html(trace).encode())
        journal_size = trace.stat().st_size
    for name, seconds in figures.items():
        print(f"{name:40s} {seconds * 1000:9.1f} ms")
    print(f"{'journal size':40s} {journal_size / 1024:9.1f} KiB")
    print(f"{'HTML size':40s} {size / 1024:9.1f} KiB")


if __name__ == "__main__":
    main()
