"""The two local engines side by side: the README's question, start to answer, on each.

    python benchmarks/local_engines.py [--rounds 3] [--model smollm2-135m]

Each round runs ``reactloop run "What is 35 * 12?"`` once per engine, in turn (ABAB…), in a
fresh process (so each pays its model process's start and load), and reads the journal: the
wall time, the model's own seconds (the sum of the steps' ``seconds``), the steps, the answer.
Prints the medians per engine and the ratio xllamacpp / llama-cpp-python.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENGINES = ("xllamacpp", "llama-cpp-python")
QUESTION = "What is 35 * 12?"


def one_run(engine: str, model: str, folder: Path) -> dict[str, float | str]:
    trace = folder / f"{engine}-{time.monotonic_ns()}.jsonl"
    env = {**os.environ, "REACTLOOP_LOCAL_ENGINE": engine}
    command = [sys.executable, "-m", "reactloop", "run", QUESTION, "--model", f"local:{model}",
               "--trace", str(trace)]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    steps = [e["raw"] for e in events if e.get("type") == "response"]
    return {
        "wall": wall,
        "model_seconds": sum(float(step["seconds"]) for step in steps),
        "steps": len(steps),
        "answer": done.stdout.strip(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default="smollm2-135m")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float | str]]] = {engine: [] for engine in ENGINES}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for engine in ENGINES:
                results[engine].append(one_run(engine, args.model, Path(folder)))
    medians = {}
    for engine, runs in results.items():
        wall = statistics.median(float(run["wall"]) for run in runs)
        model = statistics.median(float(run["model_seconds"]) for run in runs)
        medians[engine] = (wall, model)
        answers = sorted({f"{run['answer']} in {run['steps']} steps" for run in runs})
        print(f"{engine:17} wall {wall:6.2f} s · model {model:6.2f} s · {', '.join(answers)}")
    (xl_wall, xl_model), (lcp_wall, lcp_model) = medians[ENGINES[0]], medians[ENGINES[1]]
    print(f"xllamacpp / llama-cpp-python: wall {xl_wall / lcp_wall:.2f}, "
          f"model {xl_model / lcp_model:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
