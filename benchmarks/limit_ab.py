"""The cost of the time limit: a step at the library's default ``Limits`` against no limit,
this tree and another checkout taking turns (``benchmarks/overhead.py --limit-ab OTHER/src``).

    git archive 61e4ddc | tar -x -C /tmp/base   # the other side: any checkout's ``src``
    python benchmarks/overhead.py --limit-ab /tmp/base/src [--pairs 5] [--repeat 5]

Each child process runs, with ``PYTHONPATH`` at one side's ``src``, 1000-step runs of a
``FunctionModel`` whose every turn calls a trivial read-only tool (sync, then async), with the
default ``Limits().max_seconds`` and with ``max_seconds=None``, and reports the best of
``repeat`` runs of each in CPU time per step (both of its threads). The sides alternate, the
order flipping every pair, so that a drift of a shared machine's speed hits both alike; the
table gives each side's medians over the pairs and the ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"

CHILD = """
import json, sys, time
from reactloop import Agent, FunctionModel, Limits, ModelTurn, ToolCall, tool

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

@tool(read_only=True)
async def aecho(n: int) -> int:
    "Return n."
    return n

def per_step(steps, max_seconds, chosen):
    turns = [ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name=chosen.name,
             arguments=f'{{"n": {i}}}'),)) for i in range(steps)] + [ModelTurn(text="done")]
    replies = iter(turns)
    model = FunctionModel(lambda request: next(replies))
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=max_seconds)
    agent = Agent(model, [chosen], limits=limits)
    started = time.process_time()
    result = agent.run("count")
    elapsed = time.process_time() - started
    assert result.answer == "done", result.stop_reason
    return elapsed / (steps + 1)

repeat, default = int(sys.argv[1]), Limits().max_seconds
out = {}
for kind, chosen in (("sync", echo), ("async", aecho)):
    for label, seconds in (("default limit", default), ("no limit", None)):
        out[f"{kind}, {label}"] = min(per_step(1000, seconds, chosen) for _ in range(repeat))
print(json.dumps(out))
"""


def child(src: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    figures: dict[str, float] = json.loads(out.stdout)
    return figures


def limit_ab(other: Path, pairs: int, repeat: int) -> None:
    sides = {"this tree": HERE, "other": other.resolve()}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    for pair in range(pairs):
        order = list(sides) if pair % 2 == 0 else list(reversed(sides))
        for name in order:
            samples[name].append(child(sides[name], repeat))
    medians = {
        name: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for name, runs in samples.items()
    }
    keys = list(medians["this tree"])
    print(f"{'µs a step (median of ' + str(pairs) + ' pairs)':32} {'this tree':>10} {'other':>10}")
    for key in keys:
        this, that = medians["this tree"][key], medians["other"][key]
        print(f"{key:32} {this * 1e6:10.1f} {that * 1e6:10.1f}   this/other {this / that:.2f}")
    for kind in ("sync", "async"):
        ratios = [
            medians[name][f"{kind}, default limit"] / medians[name][f"{kind}, no limit"]
            for name in sides
        ]
        print(
            f"{kind}: default limit / no limit: this tree {ratios[0]:.2f}x, other {ratios[1]:.2f}x"
        )
