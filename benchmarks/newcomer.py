"""The embedded models on the tasks a newcomer tries first: solved share and parroted answers.

    python benchmarks/newcomer.py                                  # both models, native protocol
    python benchmarks/newcomer.py --models smollm2-135m --answers answers.json

Tasks: ``benchmarks/newcomer_tasks.json`` (arithmetic, lookups in the notes, questions needing no
tool, questions about a tool's result), every one with the calculator and a lookup over the
task file's notes, at most 8 model calls, greedy decoding, seed 0. Solved: the answer contains
one of the task's expected strings (numbers compared as numbers). Parroted: the answer is one of
the strings of the prompt's own format line and worked examples (alone or repeated,
``43.43.43``) — ``reactloop.models.local.examples.parroted``. Runs are sequential.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from reactloop.agent import Agent
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.local.examples import chosen_examples, example_strings, parroted
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.families.lookup import lookup_tool

TASKS = Path(__file__).with_name("newcomer_tasks.json")
KINDS = ("arithmetic", "lookup", "no_tool", "tool_result")


def solved(answer: str | None, expect: list[str]) -> bool:
    text = (answer or "").casefold()
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))]
    for wanted in expect:
        if re.fullmatch(r"-?\d+(?:\.\d+)?", wanted):
            if any(abs(n - float(wanted)) < 1e-6 for n in numbers):
                return True
        elif wanted.casefold() in text:
            return True
    return False


def run_one(
    name: str, protocol: str, task: dict[str, Any], notes: dict[str, str]
) -> dict[str, Any]:
    model = resolve_model(f"local:{name}", ModelSettings(seed=0, temperature=0.0))
    tools = [*calculator_tools(), lookup_tool(notes)]
    shown = example_strings(chosen_examples(tool.spec.name for tool in tools))
    agent = Agent(
        model,
        tools,
        protocol=protocol,  # type: ignore[arg-type]
        limits=Limits(max_model_calls=8, max_seconds=300),
    )
    start = time.monotonic()
    result = agent.run(task["question"])
    answer = result.answer
    return {
        "kind": task["kind"],
        "question": task["question"],
        "answer": answer,
        "stop": str(result.stop_reason),
        "model_calls": result.model_calls,
        "solved": solved(answer, task["expect"]),
        "parroted": answer is not None and parroted(answer, shown) is not None,
        "seconds": round(time.monotonic() - start, 1),
    }


def measure(name: str, protocol: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    runs = []
    for index, task in enumerate(data["tasks"]):
        run = run_one(name, protocol, task, data["notes"])
        runs.append({"model": name, "protocol": protocol, **run})
        print(
            f"  {name} {protocol} {index:2d} {run['kind']}: solved={run['solved']} "
            f"parroted={run['parroted']} stop={run['stop']} answer={run['answer']!r} "
            f"{run['seconds']}s",
            file=sys.stderr,
            flush=True,
        )
    return runs


def table(runs: list[dict[str, Any]]) -> str:
    head = "| model | protocol | solved | parroted | no answer | " + " | ".join(KINDS)
    lines = [head + " | s / run |", "|---" * (6 + len(KINDS)) + "|"]
    configs = dict.fromkeys((r["model"], r["protocol"]) for r in runs)
    for model, protocol in configs:
        rows = [r for r in runs if (r["model"], r["protocol"]) == (model, protocol)]
        kinds = []
        for kind in KINDS:
            of_kind = [r for r in rows if r["kind"] == kind]
            kinds.append(f"{sum(r['solved'] for r in of_kind)}/{len(of_kind)}")
        seconds = sum(r["seconds"] for r in rows) / len(rows)
        lines.append(
            f"| {model} | {protocol} | {sum(r['solved'] for r in rows)}/{len(rows)} "
            f"| {sum(r['parroted'] for r in rows)} | {sum(r['answer'] is None for r in rows)} "
            f"| {' | '.join(kinds)} | {seconds:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m")
    parser.add_argument("--protocols", default="native")
    parser.add_argument("--tasks", default=str(TASKS))
    parser.add_argument("--answers", help="also write every run's answer to this JSON file")
    args = parser.parse_args()
    data = json.loads(Path(args.tasks).read_text(encoding="utf-8"))
    runs = [
        run
        for name in args.models.split(",")
        for protocol in args.protocols.split(",")
        for run in measure(name, protocol, data)
    ]
    print(table(runs))
    if args.answers:
        Path(args.answers).write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
