"""Many runs at once in one process, each on a thread, as an eval's worker holds them: CPU a
model call and the process's context switches a call, against the same fake server as
``eval_inspect.py`` (a calculator call, then the answer; ``--latency`` s a reply).

    python benchmarks/runs_in_threads.py [--threads 256] [--runs 512] [--latency 1.0]
                                         [--compare SRC ...] [--pairs 3]

Each measurement is a child process (``--compare``: also with ``PYTHONPATH=SRC``, taking turns
with this tree's), which makes one warm-up run, then ``--runs`` runs of a default ``Agent``
(default ``Limits``: a run thread and its waiting thread) with a journal each, on ``--threads``
threads. CPU is the child's (``resource``: every thread, exited ones included), from the first
run to the last; context switches are the child's voluntary and involuntary ones. One JSON
line a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from eval_inspect import Server

CHILD = r"""
import json, resource, sys, tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from reactloop import Agent, Journal, Limits
from reactloop.models.base import ModelSettings
from reactloop.models.registry import resolve_model
from reactloop.tools.families.calculator import calculator_tool

url, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
folder = Path(tempfile.mkdtemp())
model = resolve_model("vllm:fake", ModelSettings(base_url=url))
tools = [calculator_tool()]

def one(n):
    with Journal(folder / f"{n}.jsonl") as journal:
        agent = Agent(model, tools, limits=Limits())
        return agent.run(f"What is 17 * 23? ({n})", journal=journal).stop_reason.value

one(-1)
before = resource.getrusage(resource.RUSAGE_SELF)
with ThreadPoolExecutor(threads) as pool:
    stops = list(pool.map(one, range(runs)))
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
switches = (after.ru_nvcsw + after.ru_nivcsw) - (before.ru_nvcsw + before.ru_nivcsw)
calls = 2 * runs
print(json.dumps({"answered": stops.count("final_answer"),
                  "cpu_ms_per_call": round(cpu * 1000 / calls, 2),
                  "switches_per_call": round(switches / calls, 1)}))
"""


def measure(url: str, threads: int, runs: int, src: str | None) -> dict[str, object]:
    env = dict(os.environ) if src is None else dict(os.environ, PYTHONPATH=src)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(threads), str(runs)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"tree": src or "this", **figures, "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--runs", type=int, default=512)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--compare", nargs="*", default=[], metavar="SRC")
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    server = Server(args.latency)
    try:
        for _ in range(args.pairs):
            for src in [None, *args.compare]:
                print(json.dumps(measure(server.base_url, args.threads, args.runs, src)))
    finally:
        server.close()


if __name__ == "__main__":
    main()
