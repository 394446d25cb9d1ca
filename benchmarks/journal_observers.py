"""What a run's events cost, observer by observer: the loop alone, a no-op observer, the JSON of
each event, a write of each, both, the journal to ``/dev/null`` and the journal on disk.

    PYTHONPATH=OTHER/src python benchmarks/journal_observers.py   # one side
    python benchmarks/journal_observers.py                        # this tree

Run it for each side of an A/B in turn (a few rounds each): CPU µs a step of a 1000-step run
(one scripted call of a trivial read-only tool a step, budget notices off where the side has
them), medians of five. It uses only the public API both sides have.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool

STEPS = 1000


@tool(read_only=True)
def echo(n: int) -> int:
    """Return n."""
    return n


def one_run(journal: Journal | None, observers: list[Callable[[Any], Any]]) -> float:
    turns = [
        ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="echo", arguments=f'{{"n": {i}}}'),))
        for i in range(STEPS)
    ]
    quiet: dict[str, Any] = {"budget_notices": False} if hasattr(Limits(), "budget_notices") else {}
    limits = Limits(max_model_calls=STEPS + 1, max_tool_calls=STEPS, max_seconds=None, **quiet)
    model = ScriptedModel([*turns, ModelTurn(text="done")], keep_requests=False)
    agent = Agent(model, [echo], limits=limits, journal=journal, observers=observers)
    started = time.process_time()
    agent.run("count")
    elapsed = time.process_time() - started
    if journal is not None:
        journal.close()
    return elapsed / (STEPS + 1) * 1e6


def main() -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    line = b"x" * 300
    variants: dict[str, Callable[[Path], tuple[Journal | None, list[Callable[[Any], Any]]]]] = {
        "none": lambda _: (None, []),
        "no-op": lambda _: (None, [lambda event: None]),
        "dumps": lambda _: (None, [lambda event: orjson.dumps(event.data, default=str)]),
        "write": lambda _: (None, [lambda event: os.write(null, line)]),
        "both": lambda _: (None, [lambda e: os.write(null, orjson.dumps(e.data, default=str))]),
        "journal /dev/null": lambda _: (Journal(os.devnull), []),
        "journal on disk": lambda folder: (Journal(folder / "run.jsonl"), []),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as name:
        one_run(None, [])  # warm-up: first validators, lazy imports
        for _ in range(5):
            for label, make in variants.items():
                samples[label].append(one_run(*make(Path(name))))
    print("  ".join(f"{k}={statistics.median(v):.1f}" for k, v in samples.items()))


if __name__ == "__main__":
    main()
