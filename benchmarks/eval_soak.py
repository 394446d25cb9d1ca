"""Soak of ``--workers``: many evals at a high concurrency, each bounded, counting the hangs.

    python benchmarks/eval_soak.py [--runs 50] [--episodes 3072] [--concurrency 512]
                                   [--workers auto|N] [--latency 0.05] [--timeout 600]
                                   [--task-bytes 0] [--minutes M]

Issue 40: at C = 512 with 3,072 episodes and the default workers, one run in five stopped
after some 1,500 episodes and sat idle (the driver and a worker each blocked sending to the
other, the pipes full). Each run here is one eval of two-call episodes against the fake
OpenAI server (``eval_throughput``'s, in a child process), in a child process of its own
with a wall-time bound (``--timeout``): a run that passes it is a hang, its threads' stacks
printed (``faulthandler``) and its process killed. Expected: 0 hangs, every episode recorded
and none errored. One JSON line a run (wall time, episodes a second, workers, statuses, the
load average), then a summary line. ``--task-bytes N`` pads each task's text by N bytes, so
that the episodes sent to a worker fill its pipe sooner (the condition of the hang).
``--minutes M``: no run is started after M minutes (fewer runs than ``--runs`` when they do
not fit; the summary says how many ran).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from reactloop.eval import EvalConfig, Rung, run_eval

sys.path.insert(0, str(Path(__file__).parent))
from eval_throughput import Server, tasks


def one(args: argparse.Namespace, workers: int | None) -> dict[str, Any]:
    """One eval, in this process: its figures."""
    rung = Rung(label="fake", spec="vllm:fake", base_url=args.one)
    pad = " " + "x" * args.task_bytes if args.task_bytes else ""
    padded = tuple(dataclasses.replace(t, task=t.task + pad) for t in tasks(args.episodes))
    with tempfile.TemporaryDirectory() as folder:
        config = EvalConfig(
            suite="soak",
            rungs=(rung,),
            out=Path(folder) / "out",
            repeats=1,
            tasks=padded,
            concurrency=args.concurrency,
            workers=workers,
            fsync=False,
            report=False,
        )
        start = time.perf_counter()
        outcome = run_eval(config)
        wall = time.perf_counter() - start
        statuses = Counter(r.status for r in outcome.records)
        return {
            "wall_s": round(wall, 1),
            "episodes_per_s": round(len(outcome.records) / wall, 1),
            "recorded": len(outcome.records),
            "workers": outcome.workers,
            "statuses": dict(statuses),
        }


def run(args: argparse.Namespace, base_url: str) -> dict[str, Any]:
    """One eval in a child process, killed (a hang) after ``--timeout`` seconds."""
    command = [sys.executable, __file__, "--one", base_url, *_forwarded(args)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = False
    try:
        out, err = child.communicate(timeout=args.timeout + 30)
    except subprocess.TimeoutExpired:  # not even faulthandler's exit came
        child.kill()
        out, err = child.communicate()
        hung = True
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if child.returncode == 0 and lines:
        figures: dict[str, Any] = json.loads(lines[-1])
        return figures | {"hang": False}
    hung = hung or "Timeout (" in err  # faulthandler's dump of the stacks, then its exit
    return {"hang": hung, "failed": child.returncode, "stderr_tail": err[-3000:]}


def _forwarded(args: argparse.Namespace) -> list[str]:
    return [
        f"--episodes={args.episodes}",
        f"--concurrency={args.concurrency}",
        f"--workers={args.workers}",
        f"--timeout={args.timeout}",
        f"--task-bytes={args.task_bytes}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=3072)
    parser.add_argument("--concurrency", type=int, default=512)
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--task-bytes", type=int, default=0)
    parser.add_argument("--minutes", type=float, help="start no run after M minutes")
    parser.add_argument("--one", metavar="BASE_URL")
    args = parser.parse_args()
    workers = None if args.workers == "auto" else int(args.workers)
    if args.one:  # a child: one eval, its stacks dumped if it outlives the bound
        import faulthandler

        faulthandler.dump_traceback_later(args.timeout, exit=True)
        figures = one(args, workers)
        print(json.dumps(figures), flush=True)
        return
    server = Server(args.latency)
    results = []
    stop = time.monotonic() + 60 * args.minutes if args.minutes else float("inf")
    try:
        for number in range(args.runs):
            if time.monotonic() > stop:
                break
            result = run(args, server.base_url) | {"run": number, "load": os.getloadavg()[0]}
            results.append(result)
            print(json.dumps(result), flush=True)
    finally:
        server.close()
    clean = [r for r in results if "statuses" in r]
    summary = {
        "runs": len(results),
        "hangs": sum(r["hang"] for r in results),
        "failed": sum(not r["hang"] and "statuses" not in r for r in results),
        "errored": sum(r["statuses"].get("errored", 0) for r in clean),
        "short": sum(r["recorded"] != args.episodes for r in clean),
        "wall_s": [r["wall_s"] for r in clean],
        "workers": sorted({r["workers"] for r in clean}),
    }
    print(json.dumps({"summary": summary}), flush=True)


if __name__ == "__main__":
    main()
