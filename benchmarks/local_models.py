"""Measure the embedded models on a fixed task set, to choose the default model and protocol.

    python benchmarks/local_models.py                      # both models, both protocols
    python benchmarks/local_models.py --models smollm2-135m --protocols text --repeats 1
    python benchmarks/local_models.py --markdown docs/local_models_table.md

Tasks: the seed's tea question (two lookups and a multiplication; English keys) and ten two- or
three-step calculator questions. Each (model, protocol, task) runs ``--repeats`` times with
seed = repetition index. Reported per configuration: solved rate, pass^k (a task counts only if
every repetition solved it), mean model calls, format-error and unknown-tool rates per step,
seconds per run. Runs are sequential and share one loaded model per file.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from reactloop.agent import Agent
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.families.lookup import lookup_tool
from reactloop.usage import StepQuality

NOTES = {"tea_price": "35", "guest_count": "12"}


@dataclass(frozen=True)
class Task:
    question: str
    expected: float
    lookup: bool = False


TASKS = (
    Task(
        "How much does tea cost for all the guests? The notes have tea_price (per guest) "
        "and guest_count.",
        420,
        lookup=True,
    ),
    Task("What is 17 times 23, plus 45?", 436),
    Task("What is 1234 plus 5678, times 2?", 13824),
    Task("What is 144 divided by 12, minus 5?", 7),
    Task("What is 25 squared, minus 100?", 525),
    Task("A box holds 24 pencils. How many pencils are in 15 boxes, plus 7 loose pencils?", 367),
    Task("What is 3.5 times 8, plus 12?", 40),
    Task("First compute 19 times 21. Then subtract 99 from the result.", 300),
    Task("What is (45 + 55) times (12 - 7)?", 500),
    Task("Tickets cost 18 each. What do 7 tickets cost with a discount of 20 in total?", 106),
    Task("What is 2 to the power of 10, minus 24?", 1000),
)


def solved(answer: str | None, expected: float) -> bool:
    numbers = re.findall(r"-?\d+(?:[.,]\d+)?", (answer or "").replace(",", ""))
    return any(abs(float(n) - expected) < 1e-6 for n in numbers)


def run_one(model: Any, protocol: str, task: Task) -> dict[str, Any]:
    tools = calculator_tools()
    if task.lookup:
        tools.append(lookup_tool(NOTES))
    quality = StepQuality()
    agent = Agent(
        model,
        tools,
        protocol=protocol,  # type: ignore[arg-type]
        limits=Limits(max_model_calls=8, max_seconds=300),
        observers=[quality],
    )
    start = time.monotonic()
    result = agent.run(task.question)
    return {
        "solved": solved(result.answer, task.expected),
        "answer": result.answer,
        "stop": str(result.stop_reason),
        "model_calls": result.model_calls,
        "format_errors": quality.format_errors,
        "unknown_tools": quality.unknown_tools,
        "turns": quality.turns,
        "seconds": time.monotonic() - start,
    }


def measure(name: str, protocol: str, repeats: int, temperature: float) -> dict[str, Any]:
    runs: list[list[dict[str, Any]]] = []
    for index, task in enumerate(TASKS):
        per_task = []
        for seed in range(repeats):
            model = resolve_model(
                f"local:{name}", ModelSettings(seed=seed, temperature=temperature)
            )
            per_task.append(run_one(model, protocol, task))
            run = per_task[-1]
            print(
                f"  {name} {protocol} task {index} seed {seed}: solved={run['solved']} "
                f"stop={run['stop']} calls={run['model_calls']} answer={run['answer']!r} "
                f"{run['seconds']:.1f}s",
                file=sys.stderr,
                flush=True,
            )
        runs.append(per_task)
    flat = [run for per_task in runs for run in per_task]
    turns = sum(r["turns"] for r in flat) or 1
    return {
        "model": name,
        "protocol": protocol,
        "solved": sum(r["solved"] for r in flat) / len(flat),
        "pass_k": sum(all(r["solved"] for r in per_task) for per_task in runs) / len(runs),
        "steps": statistics.mean(r["model_calls"] for r in flat),
        "format_errors": sum(r["format_errors"] for r in flat) / turns,
        "unknown_tools": sum(r["unknown_tools"] for r in flat) / turns,
        "seconds": statistics.mean(r["seconds"] for r in flat),
        "identical_repeats": all(
            len({(r["answer"], r["model_calls"]) for r in per_task}) == 1 for per_task in runs
        ),
    }


def table(rows: list[dict[str, Any]], repeats: int) -> str:
    lines = [
        f"| model | protocol | solved | pass^{repeats} | mean steps | format errors / step "
        "| unknown tools / step | s / run | repeats identical |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['model']} | {row['protocol']} | {row['solved']:.0%} | {row['pass_k']:.0%} "
            f"| {row['steps']:.2f} | {row['format_errors']:.2f} | {row['unknown_tools']:.2f} "
            f"| {row['seconds']:.1f} | {'yes' if row['identical_repeats'] else 'no'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m")
    parser.add_argument("--protocols", default="text,native")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()
    rows = [
        measure(name, protocol, args.repeats, args.temperature)
        for name in args.models.split(",")
        for protocol in args.protocols.split(",")
    ]
    text = table(rows, args.repeats)
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
