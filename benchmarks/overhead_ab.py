"""An interleaved A/B of the loop's own cost: this tree against another checkout.

    git worktree add /tmp/base197 197d370
    python benchmarks/overhead_ab.py /tmp/base197/src [--pairs 8] [--repeat 3] [--notices-off]

Each side runs in processes of its own, with ``PYTHONPATH`` at its ``src``, the two taking
turns (the order flips every pair), so that a drift of a busy machine's speed hits both alike;
the table gives the median of the pairs and the ratio of this tree to the other, and the
fastest of each side (the run least disturbed by other work), and the median and quartiles of
the ratio within each pair. The runs are
``benchmarks/overhead.py``'s (a scripted model whose every turn calls a trivial read-only tool,
CPU time per step), written with the public API both sides have. ``import reactloop`` is timed
twice: as the environment runs Python (here ``PYTHONDONTWRITEBYTECODE=1``: every module is
compiled at each start) and with a bytecode cache, as an installed package has (written by a
first import into a folder of each side's own).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
from reactloop import Agent, Journal, Limits, ModelTurn, ScriptedModel, ToolCall, tool

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

# --notices-off: budget notices (issue 17, on by default since) off where the side has them
HAS_NOTICES = hasattr(Limits(), "budget_notices")
OFF = {"budget_notices": False} if sys.argv[2:] == ["off"] and HAS_NOTICES else {}

def one_run(steps, folder):
    turns = [ModelTurn(tool_calls=(ToolCall(id=f"c{i}", name="echo", arguments=f'{{"n": {i}}}'),))
             for i in range(steps)] + [ModelTurn(text="done")]
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps, max_seconds=None, **OFF)
    journal = Journal(folder / f"run-{steps}.jsonl") if folder else None
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits, journal=journal)
    started = time.process_time()
    result = agent.run("count")
    elapsed = time.process_time() - started
    if journal:
        journal.close()
    assert result.answer == "done", result.stop_reason
    return elapsed / (steps + 1)

repeat, out = int(sys.argv[1]), {}
with tempfile.TemporaryDirectory() as name:
    folder = Path(name)
    one_run(10, None), one_run(10, folder)  # warm-up: first validators, lazy imports
    for steps in (100, 1000):
        off = [one_run(steps, None) for _ in range(repeat)]
        on = [one_run(steps, folder) for _ in range(repeat)]
        out[f"journal off, {steps} steps"] = sorted(off)[len(off) // 2]
        out[f"journal on, {steps} steps"] = sorted(on)[len(on) // 2]
print(json.dumps(out))
"""
IMPORT = "import time; t = time.perf_counter(); import reactloop; print(time.perf_counter() - t)"


def side_env(src: str, cache: str | None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=src)
    if cache is not None:  # a bytecode cache of this side's own, as an installed package has
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def run_json(command: list[str], env: dict[str, str]) -> object:
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout)


def measure(
    sides: dict[str, str], pairs: int, repeat: int, notices_off: bool = False
) -> dict[str, dict[str, list[float]]]:
    samples: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    with tempfile.TemporaryDirectory() as caches:
        for pair in range(pairs):
            order = list(sides.items()) if pair % 2 == 0 else list(sides.items())[::-1]
            for side, src in order:
                cache = str(Path(caches) / side)
                child = [
                    sys.executable,
                    "-c",
                    CHILD,
                    str(repeat),
                    *(["off"] if notices_off else []),
                ]
                steps = run_json(child, side_env(src, None))
                assert isinstance(steps, dict)
                for key, value in steps.items():
                    samples[side].setdefault(key, []).append(value * 1e6)
                for label, env in (
                    ("import", side_env(src, None)),
                    ("import, cached", side_env(src, cache)),
                ):
                    if label.endswith("cached") and pair == 0:
                        run_json([sys.executable, "-c", IMPORT], env)  # writes the cache
                    for _ in range(3):
                        seconds = run_json([sys.executable, "-c", IMPORT], env)
                        assert isinstance(seconds, float)
                        samples[side].setdefault(f"`import reactloop` ({label}), ms", []).append(
                            seconds * 1e3
                        )
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("other", help="the src folder of the other checkout")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--notices-off", action="store_true", help="budget notices off")
    args = parser.parse_args()
    sides = {"other": str(Path(args.other).resolve()), "this": str(HERE)}
    load = os.getloadavg()
    samples = measure(sides, args.pairs, args.repeat, args.notices_off)
    print(f"load average {load[0]:.1f} before, {os.getloadavg()[0]:.1f} after; {args.pairs} pairs")
    print(
        "| per step (CPU µs) | other | this | this / other | fastest: other, this, ratio "
        "| ratio within a pair: median (quartiles) |"
    )
    print("|---|---|---|---|---|---|")
    for key in samples["this"]:
        other, this = samples["other"][key], samples["this"][key]
        mid_other, mid_this = statistics.median(other), statistics.median(this)
        low_other, low_this = min(other), min(this)  # the least disturbed by other work
        print(
            f"| {key} | {mid_other:.1f} | {mid_this:.1f} | {mid_this / mid_other:.2f} | "
            f"{low_other:.1f}, {low_this:.1f}, {low_this / low_other:.2f} | {paired(other, this)} |"
        )


def paired(other: list[float], this: list[float]) -> str:
    """The ratio of the two sides' runs taken next to each other: a drift of the machine's
    speed between pairs cancels out, which neither side's median nor its fastest does."""
    ratios = sorted(b / a for a, b in zip(other, this, strict=True))
    if len(ratios) < 4:
        return f"{statistics.median(ratios):.2f}"
    low, mid, high = statistics.quantiles(ratios, n=4)
    return f"{mid:.2f} ({low:.2f}–{high:.2f})"


if __name__ == "__main__":
    main()
