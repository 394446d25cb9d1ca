"""Long runs: input tokens and the cached share per step, by observation budget and context
policy, beside the cost model ``nS + d·n(n−1)/2``.

    python benchmarks/long_runs.py [--steps 60] [--page-chars 20000] [--context 32000]

A scripted run of ``--steps`` steps, each one tool call returning a distinct page of
``--page-chars`` characters. The model is a function that plays a provider: it renders each
request as the OpenAI adapter sends it, counts its tokens (four characters a token) and, as a
prefix cache does, counts as cached the messages it received identically in the request
before. So what the table shows is what the harness sends: how much of each prompt a real
provider could serve from its cache. Configurations: the whole page in context, the default
observation budget (8,000 characters, the rest readable with ``read_output``), and that budget
with ``--context-policy trim`` and ``summarize`` under a ``--context`` token limit.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from reactloop import Agent, FunctionModel, Limits, ModelTurn, ToolCall, Usage, tool
from reactloop.models.base import ModelRequest
from reactloop.models.openai.request import render_history, render_tools
from reactloop.usage import fit_cost_model


@dataclass
class Provider:
    """Counts tokens and cache hits the way a provider with a prefix cache would."""

    steps: int
    previous: list[str] = field(default_factory=list)
    previous_tools: str = ""
    inputs: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)
    summary_calls: list[tuple[int, int]] = field(default_factory=list)
    done: int = 0
    breaks: int = 0  # requests that did not extend the one before (compactions)

    def __call__(self, request: ModelRequest) -> ModelTurn:
        wire = [json.dumps(m) for m in render_history(request.messages)]
        tool_text = json.dumps(render_tools(request.tools))
        tools = len(tool_text) // 4
        shared = 0
        if tool_text == self.previous_tools:  # providers key their cache on the tools too
            limit = min(len(wire), len(self.previous))
            while shared < limit and wire[shared] == self.previous[shared]:
                shared += 1
        self.previous_tools = tool_text
        if shared < len(self.previous):
            self.breaks += 1
        self.previous = wire
        total = tools + sum(len(m) for m in wire) // 4
        cached = (tools + sum(len(m) for m in wire[:shared]) // 4) if shared else 0
        usage = Usage(input_tokens=total, output_tokens=30, cached_tokens=cached)
        if "context is nearly full" in request.messages[-1].content:
            self.summary_calls.append((total, cached))
            return ModelTurn(text="Read pages so far; each lists tea prices.", usage=usage)
        self.inputs.append(total)
        self.cached.append(cached)
        self.done += 1
        if self.done > self.steps:
            return ModelTurn(text="done", usage=usage)
        call = ToolCall(id=f"c{self.done}", name="page", arguments=json.dumps({"n": self.done}))
        return ModelTurn(tool_calls=(call,), usage=usage)


def run(steps: int, page_chars: int, **limits: Any) -> tuple[Provider, Any]:
    @tool(read_only=True)
    def page(n: int) -> str:
        """Fetch one page of the catalogue."""
        line = f"page {n}: item {{}} costs {{}} roubles. "
        text = "".join(line.format(i, n * 7 + i) for i in range(page_chars // 30 + 1))
        return text[:page_chars]

    provider = Provider(steps)
    budget: dict[str, Any] = {
        "max_model_calls": 2 * steps + 10,
        "max_tool_calls": steps + 5,
        "max_seconds": None,
        **limits,
    }
    agent = Agent(FunctionModel(provider), [page], limits=Limits(**budget))
    return provider, agent.run("Find the cheapest tea in the catalogue.")


def row(label: str, provider: Provider, result: Any) -> str:
    inputs, cached = provider.inputs, provider.cached
    total, hit = sum(inputs), sum(cached)
    model = fit_cost_model(inputs)
    predicted = f"{model.predicted:,.0f}" if model else "-"
    summary = provider.summary_calls
    summary_text = (
        f"{len(summary)} × {sum(t for t, _ in summary) // max(len(summary), 1):,} "
        f"({sum(c for _, c in summary) / max(sum(t for t, _ in summary), 1):.0%} cached)"
        if summary
        else "-"
    )
    return (
        f"| {label} | {result.stop_reason} | {total:,} | {predicted} | {max(inputs):,} | "
        f"{hit / total:.1%} | {total - hit:,} | {provider.breaks} | {summary_text} |"
    )


def per_step(provider: Provider, every: int) -> str:
    inputs, cached = provider.inputs, provider.cached
    return " ".join(
        f"{n}:{inputs[n - 1] // 1000}k/{cached[n - 1] / inputs[n - 1]:.0%}"
        for n in range(1, len(inputs) + 1, every)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--page-chars", type=int, default=20_000)
    parser.add_argument("--context", type=int, default=32_000)
    args = parser.parse_args()
    configs = [
        ("whole pages", {"max_observation_chars": 10 * args.page_chars}),
        ("budget 8,000", {}),
        ("budget + trim", {"context_tokens": args.context, "context_policy": "trim"}),
        ("budget + summarize", {"context_tokens": args.context, "context_policy": "summarize"}),
    ]
    print(
        "| run | stop | input tokens | nS + d·n(n−1)/2 | largest prompt | cached | uncached "
        "| prefix breaks | summary calls (mean prompt) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    details = []
    for label, limits in configs:
        provider, result = run(args.steps, args.page_chars, **limits)
        print(row(label, provider, result))
        details.append(f"{label}: {per_step(provider, 10)}")
    print()
    print("Per step (prompt tokens / cached share, every 10th step):")
    for line in details:
        print(f"- {line}")


if __name__ == "__main__":
    main()
