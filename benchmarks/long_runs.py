"""Long runs: input tokens and the cached share per step, by observation budget and context
policy, beside the cost model ``nS + d·n(n−1)/2``.

    python benchmarks/long_runs.py [--steps 60] [--page-chars 20000] [--context 32000]
        [--plot docs/long_runs_60_steps.png]
    python benchmarks/long_runs.py --notices-overhead   # budget notices on vs off, A/B

A scripted run of ``--steps`` steps, each one tool call returning a distinct page of
``--page-chars`` characters. The model is a function that plays a provider: it renders each
request as the OpenAI adapter sends it, counts its tokens (four characters a token) and, as a
prefix cache does, counts as cached the messages it received identically in the request
before. So what the table shows is what the harness sends: how much of each prompt a real
provider could serve from its cache. Configurations: the whole page in context, the default
observation budget (8,000 characters, the rest readable with ``read_output``), and that budget
with ``--context-policy trim`` and ``summarize`` under a ``--context`` token limit.
``--plot FILE`` draws the figure of docs/benchmarks.md (matplotlib, the dev extra): prompt
tokens and cached share per step, and the run's input total beside ``nS + d·n(n−1)/2``.
``--notices-overhead`` measures what the budget notices (on by default) cost a step: 400-step
scripted runs with them on and off, taking turns in one process, medians of 31 each (CPU time
of the process, so that other jobs on the machine count less).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from reactloop import (
    Agent,
    FunctionModel,
    Limits,
    ModelTurn,
    ScriptedModel,
    ToolCall,
    Usage,
    tool,
)
from reactloop.models.base import ModelRequest
from reactloop.models.openai.request import render_history, render_tools
from reactloop.usage import fit_cost_model, predicted_input_tokens


@dataclass
class Provider:
    """Counts tokens and cache hits the way a provider with a prefix cache would."""

    steps: int
    previous: list[str] = field(default_factory=list)
    previous_tools: str = ""
    inputs: list[int] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)
    summary_calls: list[tuple[int, int]] = field(default_factory=list)
    summary_at: list[tuple[int, tuple[int, int]]] = field(default_factory=list)  # after step
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
            self.summary_at.append((self.done, (total, cached)))
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


COLORS = {
    "whole pages": "#c62828",
    "budget 8,000": "#1565c0",
    "budget + trim": "#2e7d32",
    "budget + summarize": "#8e24aa",
}


def plot(runs: list[tuple[str, Provider]], path: str, steps: int, page_chars: int) -> None:
    """Three panels: prompt tokens per step (summary calls marked), the cached share per
    step, and cumulative input tokens beside each run's fitted ``nS + d·n(n−1)/2``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (prompts, shares, totals) = pyplot.subplots(1, 3, figsize=(15, 4.6), dpi=100)
    for label, provider in runs:
        color = COLORS.get(label, "#555555")
        numbers = range(1, len(provider.inputs) + 1)
        prompts.plot(numbers, [t / 1000 for t in provider.inputs], color=color, label=label)
        share = [
            100 * c / t if t else 0 for c, t in zip(provider.cached, provider.inputs, strict=True)
        ]
        shares.plot(numbers, share, color=color, label=label)
        running, total = [], 0
        for tokens in provider.inputs:
            total += tokens
            running.append(total / 1e6)
        totals.plot(numbers, running, color=color, label=label)
        model = fit_cost_model(provider.inputs)
        if model is not None and label in ("whole pages", "budget 8,000"):  # history only grows
            curve = [predicted_input_tokens(model.system_tokens, model.step_tokens, n) / 1e6
                     for n in numbers]  # fmt: skip
            first = label == "whole pages"
            totals.plot(numbers, curve, color="black", linestyle=(0, (1, 3)), linewidth=2,
                        zorder=3, label="nS + d·n(n−1)/2 (fitted)" if first else None)  # fmt: skip
        for step, (tokens, _) in provider.summary_at:
            prompts.plot(step, tokens / 1000, marker="o", color=color, markersize=4)
    prompts.set(title="prompt tokens per step (k)", xlabel="step", ylabel="thousand tokens")
    prompts.plot([], [], marker="o", linestyle="", color="#555555", label="summary call")
    shares.set(title="cached share of the prompt (%)", xlabel="step", ylim=(0, 100))
    totals.set(title="input tokens so far (M)", xlabel="step", ylabel="million tokens")
    totals.legend(fontsize=8)
    for axes in (prompts, shares, totals):
        axes.grid(alpha=0.3)
    prompts.legend(fontsize=8)
    figure.suptitle(
        f"{steps}-step scripted run, {page_chars:,}-character observations "
        "(benchmarks/long_runs.py)"
    )
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    pyplot.close(figure)


def notices_overhead(steps: int = 400, repeat: int = 31) -> str:
    """Microseconds a scripted step takes with the budget notices on and off (A/B)."""

    @tool(read_only=True)
    def probe(n: int) -> int:
        """Return n."""
        return n

    def step_time(notices: bool) -> float:
        calls = [ToolCall(id=f"c{i}", name="probe", arguments=json.dumps({"n": i}))
                 for i in range(steps)]  # fmt: skip
        model = ScriptedModel([ModelTurn(tool_calls=(call,)) for call in calls] + ["done"])
        limits = Limits(
            max_model_calls=steps + 2,
            max_tool_calls=steps + 2,
            max_seconds=None,
            budget_notices=notices,
        )
        agent = Agent(model, [probe], limits=limits)
        started = time.process_time()
        result = agent.run("go")
        assert result.stop_reason == "final_answer", result.error
        return (time.process_time() - started) / (steps + 1) * 1e6

    times: dict[bool, list[float]] = {True: [], False: []}
    for turn in range(repeat):  # taking turns, each first half the time
        for notices in (False, True) if turn % 2 else (True, False):
            times[notices].append(step_time(notices))
    on, off = statistics.median(times[True]), statistics.median(times[False])
    return f"budget notices on {on:.2f} µs/step, off {off:.2f} µs/step (on/off {on / off:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--page-chars", type=int, default=20_000)
    parser.add_argument("--context", type=int, default=32_000)
    parser.add_argument("--plot", help="write the figure to this PNG file")
    parser.add_argument("--notices-overhead", action="store_true", help="the notices' A/B only")
    args = parser.parse_args()
    if args.notices_overhead:
        print(notices_overhead())
        return
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
    details, runs = [], []
    for label, limits in configs:
        provider, result = run(args.steps, args.page_chars, **limits)
        print(row(label, provider, result))
        details.append(f"{label}: {per_step(provider, 10)}")
        runs.append((label, provider))
    print()
    print("Per step (prompt tokens / cached share, every 10th step):")
    for line in details:
        print(f"- {line}")
    print()
    print(summary_cost(runs))
    if args.plot:
        plot(runs, args.plot, args.steps, args.page_chars)
        print(f"figure: {args.plot}")


def summary_cost(runs: list[tuple[str, Provider]]) -> str:
    """Input in uncached-token equivalents (cached tokens at a tenth), with and without the
    summary calls: what each policy costs, and what the summaries themselves add."""
    parts = []
    for label, provider in runs:
        equivalent = sum(t - 0.9 * c for t, c in zip(provider.inputs, provider.cached, strict=True))
        calls = sum(t - 0.9 * c for _, (t, c) in provider.summary_at)
        text = f"{label} {equivalent / 1e6:.2f} M"
        if provider.summary_at:
            text += f" ({(equivalent + calls) / 1e6:.2f} M with its summary calls)"
        parts.append(text)
    return "Input cost, uncached-token equivalents (cached at 1/10): " + ", ".join(parts)


if __name__ == "__main__":
    main()
