"""Prefix reuse on the embedded model over an 8-step run.

    python benchmarks/prefix_reuse.py [--model smollm2-135m] [--protocol text] [--steps 8]

The run is driven step by step so that it always lasts ``--steps`` model calls, whatever the
model answers: each step the model's action runs on the real calculator and its observation
is appended (a ``Finish`` gets a "keep going" note instead). The history only grows, as in an
``Agent`` run. Checked per step (exit status 1 when a check fails):

- prompt tokens llama.cpp evaluated <= 1.2 x the tokens added to the prompt since the step before;
- the latency of step 8 is within 1.5 x that of step 2, both for the whole step and for the
  prompt part alone (time to first token);

and reported: generated tokens per second on this machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from reactloop.messages import Message, ModelTurn, ToolSpec
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import Model, ModelRequest
from reactloop.models.react import ReactTextModel
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.toolbox import Toolbox

TASK = (
    "Keep a running total. Start at 0 and add these numbers one at a time with the "
    "calculator: 17, 23, 45, 12, 8, 31, 6, 19, 27, 4. After each addition, add the next."
)


def drive(model: Model, toolbox: Toolbox, steps: int) -> list[dict[str, Any]]:
    history: list[Message] = [Message(role="user", content=TASK, kind="task")]
    specs: tuple[ToolSpec, ...] = tuple(toolbox.specs)
    rows = []
    for step in range(1, steps + 1):
        turn = model.complete(ModelRequest(messages=history, tools=specs, step=step))
        rows.append({"step": step, **turn.raw, "text": turn.text})
        history.append(_assistant(turn))
        history.extend(_observations(turn, toolbox))
    return rows


def _assistant(turn: ModelTurn) -> Message:
    return Message(
        role="assistant",
        content=turn.text,
        tool_calls=turn.tool_calls,
        reasoning=turn.reasoning,
        raw=turn.raw_message,
    )


def _observations(turn: ModelTurn, toolbox: Toolbox) -> list[Message]:
    if not turn.tool_calls:
        return [
            Message(role="user", content="Not finished yet: add the next number.", kind="notice")
        ]
    return [
        Message(
            role="tool",
            content=toolbox.execute(call).to_content(),
            tool_call_id=call.id,
            name=call.name,
        )
        for call in turn.tool_calls
    ]


def check(rows: list[dict[str, Any]]) -> list[str]:
    failures = []
    for row in rows[1:]:
        if row["evaluated_tokens"] > 1.2 * row["added_tokens"]:
            failures.append(
                f"step {row['step']}: evaluated {row['evaluated_tokens']} > 1.2 x "
                f"added {row['added_tokens']}"
            )
    if len(rows) >= 8:
        second, eighth = rows[1], rows[7]
        for key in ("seconds", "prompt_eval_ms"):
            if eighth[key] > 1.5 * second[key]:
                failures.append(f"{key}: step 8 {eighth[key]} > 1.5 x step 2 {second[key]}")
    return failures


def report(rows: list[dict[str, Any]]) -> None:
    print("| step | prompt tokens | added | evaluated | reused | generated | prompt ms | step s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['step']} | {row['prompt_tokens']} | {row['added_tokens']} "
            f"| {row['evaluated_tokens']} | {row['reused_tokens']} | {row['generated_tokens']} "
            f"| {row['prompt_eval_ms']:.0f} | {row['seconds']:.2f} |"
        )
    speeds = [row["tokens_per_second"] for row in rows if row["tokens_per_second"]]
    print(
        f"\ngenerated tokens/s: median {statistics.median(speeds):.1f} "
        f"(min {min(speeds):.1f}, max {max(speeds):.1f})"
    )
    later = rows[1:]
    ratio = statistics.median(r["evaluated_tokens"] / r["added_tokens"] for r in later)
    print(
        f"evaluated / added, steps 2-{len(rows)}: median {ratio:.2f}, "
        f"max {max(r['evaluated_tokens'] / r['added_tokens'] for r in later):.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="prefix reuse on the embedded model")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--protocol", choices=("text", "native"), default="text")
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    local = resolve_model(f"local:{args.model}", ModelSettings())
    model: Model = ReactTextModel(local) if args.protocol == "text" else local
    drive(model, Toolbox(calculator_tools()), 1)  # warm up: load weights, page them in
    local = resolve_model(f"local:{args.model}", ModelSettings())  # fresh prompt cache
    model = ReactTextModel(local) if args.protocol == "text" else local
    rows = drive(model, Toolbox(calculator_tools()), args.steps)
    for row in rows:
        print(f"step {row['step']}: {row['text']!r}", file=sys.stderr)
    report(rows)
    failures = check(rows)
    for failure in failures:
        print("FAIL", failure)
    print("all checks passed" if not failures else f"{len(failures)} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
