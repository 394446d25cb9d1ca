"""One turn with four calls to a tool that sleeps 0.2 s: parallel-safe calls must overlap.

    python benchmarks/parallel_tools.py [--repeat 5]

Four cases, each a whole ``Agent.run`` (the tool turn, then the answer turn): a scripted model
and the OpenAI-compatible adapter over the fake HTTP server on 127.0.0.1, each with the tool
marked read-only (runs concurrently) and with side effects (runs one call after another).
Prints the median wall time of each; exits 1 when a read-only case is not under 0.3 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from reactloop import Agent, ScriptedModel, Tool, tool
from reactloop.models.base import Model
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer, completion, tool_call

SLEEP = 0.2
CALLS = 4
LIMIT = 0.3


def slow_tool(*, read_only: bool) -> Tool:
    def probe(n: int) -> int:
        """Wait 0.2 s and return n."""
        time.sleep(SLEEP)
        return n

    return tool(read_only=read_only)(probe)


def scripted_model() -> Model:
    calls = [{"name": "probe", "arguments": {"n": n}} for n in range(CALLS)]
    return ScriptedModel([{"tool_calls": calls}, "done"])


def timed_run(model: Model, read_only: bool) -> float:
    agent = Agent(model, [slow_tool(read_only=read_only)])
    started = time.perf_counter()
    result = agent.run("probe four times")
    elapsed = time.perf_counter() - started
    if result.answer != "done" or result.tool_calls != CALLS:
        raise SystemExit(f"unexpected run: {result.stop_reason} {result.error}")
    return elapsed


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def bench_scripted(read_only: bool, repeat: int) -> float:
    return median([timed_run(scripted_model(), read_only) for _ in range(repeat)])


def bench_adapter(read_only: bool, repeat: int) -> float:
    calls = [tool_call("probe", {"n": n}, id=f"c{n}") for n in range(CALLS)]
    samples = []
    for _ in range(repeat):
        with FakeOpenAIServer([completion(tool_calls=calls), completion("done")]) as server:
            model = OpenAIChatModel(model="m", base_url=server.base_url)
            samples.append(timed_run(model, read_only))
    return median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = [
        ("scripted model, read-only tool", bench_scripted(True, args.repeat), True),
        ("scripted model, side-effect tool", bench_scripted(False, args.repeat), False),
        ("adapter + fake server, read-only tool", bench_adapter(True, args.repeat), True),
        ("adapter + fake server, side-effect tool", bench_adapter(False, args.repeat), False),
    ]
    failed = False
    print(f"{CALLS} calls x {SLEEP}s, median of {args.repeat} runs")
    for label, seconds, must_be_fast in rows:
        verdict = ""
        if must_be_fast:
            verdict = "ok" if seconds < LIMIT else f"TOO SLOW (limit {LIMIT}s)"
            failed = failed or seconds >= LIMIT
        print(f"  {label:48s} {seconds * 1000:7.1f} ms  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
