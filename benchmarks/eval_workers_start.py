"""The fixed cost of ``--workers``: a small eval's wall time with N worker processes against
one process, in the same run, against the fake OpenAI server answering at once.

    python benchmarks/eval_workers_start.py [--episodes 16] [--workers 2] [--repeat 3]

Each round runs the same eval in one process (``workers=1``, the in-process path) and in
``--workers`` processes, in turn; the difference of their wall times is what the workers'
start costs (their start and the pipe to each, less what they gain on so few episodes).
Medians of ``--repeat`` rounds, with the load average. The first round of a process also
starts the forkserver (the workers' parent, which imports the heavy modules once): its
figure is printed apart as ``first``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from reactloop.eval import EvalConfig, Rung, run_eval

sys.path.insert(0, str(Path(__file__).parent))
from eval_throughput import Server, tasks


def wall(base_url: str, episodes: int, workers: int) -> float:
    rung = Rung(label="fake", spec="vllm:fake", base_url=base_url)
    with tempfile.TemporaryDirectory() as folder:
        config = EvalConfig(
            suite="bench",
            rungs=(rung,),
            out=Path(folder) / "out",
            repeats=1,
            tasks=tasks(episodes),
            concurrency=8,
            workers=workers,
            fsync=False,
            report=False,
        )
        start = time.perf_counter()
        outcome = run_eval(config)
        assert outcome.errored == 0, outcome.records[0]
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    server = Server(0.0)
    try:
        wall(server.base_url, 4, 1)  # warm-up: imports, the first client
        first = wall(server.base_url, args.episodes, args.workers) - wall(
            server.base_url, args.episodes, 1
        )
        costs = []
        for _ in range(args.repeat):
            one = wall(server.base_url, args.episodes, 1)
            many = wall(server.base_url, args.episodes, args.workers)
            costs.append(many - one)
    finally:
        server.close()
    print(
        json.dumps(
            {
                "episodes": args.episodes,
                "workers": args.workers,
                "first_s": round(first, 2),
                "fixed_s": round(statistics.median(costs), 2),
                "rounds_s": [round(c, 2) for c in costs],
                "load": round(os.getloadavg()[0], 1),
            }
        )
    )


if __name__ == "__main__":
    main()
