"""Start-up of the command: wall time of ``reactloop run`` with a scripted model, no journal.

    python benchmarks/cli_startup.py [--repeat 9] [--imports 15] [--compare OLD/src]

Each row is a fresh process, timed from its start to its exit (the answer is printed just
before): ``python -c pass`` (the interpreter's floor), ``import reactloop``, ``reactloop
--help``, and ``reactloop run`` with a scripted model that calls the calculator once and
answers (``--no-trace``: no journal). The rows take turns, so a drift of the machine's speed
hits them alike; each figure is the median of ``--repeat`` runs. ``--imports N`` then prints
the N slowest imports of the scripted run (``python -X importtime``, cumulative µs).
``--compare DIR`` adds the same rows run from another copy of the sources (``PYTHONPATH=DIR``,
e.g. ``git archive HEAD~1 src | tar -x -C /tmp/old``), interleaved with these: an A/B. The
target (issue 16): the scripted run under 0.3 s. Figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}, "5"]
TARGET_SECONDS = 0.3


def commands(script: Path) -> dict[str, list[str]]:
    python = [sys.executable]
    return {
        "python -c pass (floor)": [*python, "-c", "pass"],
        "import reactloop": [*python, "-c", "import reactloop"],
        "reactloop --help": [*python, "-m", "reactloop", "--help"],
        "reactloop run, scripted": [
            *python, "-m", "reactloop", "run", "2+3?", "--model", f"scripted:{script}",
            "--no-trace",
        ],
    }  # fmt: skip


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def slowest_imports(argv: list[str], env: dict[str, str], count: int) -> list[tuple[int, str]]:
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=env
    )
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--imports", type=int, default=0, help="show the N slowest imports")
    parser.add_argument("--compare", help="another copy's src folder, for an A/B")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "script.json"
        script.write_text(json.dumps(SCRIPT), encoding="utf-8")
        env = {**os.environ, "REACTLOOP_RUNS_DIR": str(Path(folder) / "runs")}
        rows = {label: (argv, env) for label, argv in commands(script).items()}
        if args.compare:
            old = {**env, "PYTHONPATH": str(Path(args.compare).resolve())}
            rows |= {f"{label} [old]": (argv, old) for label, argv in commands(script).items()}
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in rows}
        for _ in range(args.repeat):
            for label, (argv, row_env) in rows.items():
                times[label].append(timed(argv, row_env))
        print(f"{'median of ' + str(args.repeat):32} {'wall':>8} {'cpu':>8} {'wall min':>9}")
        for label, samples in times.items():
            wall = statistics.median(s[0] for s in samples)
            cpu = statistics.median(s[1] for s in samples)
            print(f"{label:32} {wall:7.3f}s {cpu:7.3f}s {min(s[0] for s in samples):8.3f}s")
        run = statistics.median(s[0] for s in times["reactloop run, scripted"])
        verdict = "met" if run < TARGET_SECONDS else "NOT met"
        print(f"target: scripted run < {TARGET_SECONDS} s: {verdict}")
        if args.imports:
            print("slowest imports of the scripted run (cumulative µs):")
            scripted = rows["reactloop run, scripted"][0]
            for micros, name in slowest_imports(scripted, env, args.imports):
                print(f"{micros:>9}  {name}")


if __name__ == "__main__":
    main()
