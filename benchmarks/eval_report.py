"""The eval report, this tree against another, side by side.

    python benchmarks/eval_report.py --compare OLD/src [--episodes 1024] [--pairs 7] [--end]

One eval of ``--episodes`` oracle episodes is run once (no report), then its report is made
again and again over the same ``episodes/`` folder, by fresh processes taking turns between
this tree's sources and ``--compare``'s (``git archive REV src | tar -x -C /tmp/old``): each
times the tables' pass (every record read from its file, counted, put in results.csv and in
results.json's episodes) and the whole ``write_report`` (charts drawn in process included),
in CPU seconds. Medians over the pairs, and this ÷ other.

``--end``: instead, each fresh process runs a whole eval of ``--episodes`` oracle episodes
with its report (the report's child drawing the pages and charts, as from 64 episodes) and
times what comes after its last record: ``end_s`` the wall time to ``run_eval``'s return (the
tables, the files, the wait for the child), ``end_cpu_s`` the eval's process's CPU in it.
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

from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
try:  # this tree's eval/ sub-packages, or a tree from before them
    from reactloop.eval.report import write as report
    from reactloop.eval.report.process import ReportProcess
    from reactloop.eval.records.store import ResultsStore, StoredRecords
except ImportError:
    from reactloop.eval import report
    from reactloop.eval.report_process import ReportProcess
    from reactloop.eval.store import ResultsStore, StoredRecords

out, k = Path(sys.argv[1]), int(sys.argv[2])
store = ResultsStore(out, fsync=False)
records = StoredRecords(store, sorted(p.stem for p in store.episodes.glob("*.json")))
start = time.process_time()
if hasattr(report, "StreamedReport"):  # the records taken one by one, then the files
    with report.StreamedReport(out) as taken, tempfile.TemporaryFile("w+") as errored:
        for n, (record, text) in enumerate(records.with_texts()):
            taken.add(n, record, text)
        empty = {"summary": [], "comparisons": [], "per_step": [], "episodes": [], "endpoints": []}
        taken._write_results(store, empty, errored)
else:
    with tempfile.TemporaryFile("w+") as episodes, tempfile.TemporaryFile("w+") as errored:
        report._first_pass(store, out, records, episodes, errored)
tables = time.process_time() - start
start = time.process_time()
report.write_report(out, records, k=k, report_process=ReportProcess.here())
print(json.dumps({"tables_s": tables, "report_s": time.process_time() - start}))
"""

END = """
import json, sys, tempfile, time
from pathlib import Path
from reactloop.eval import EvalConfig, Rung, load_suite, run_eval
from reactloop.eval.run.oracle import OracleFactory

tasks = tuple(load_suite("arithmetic"))
repeats = max(1, int(sys.argv[1]) // len(tasks))
last = [0.0, 0.0]


def on_record(record):
    last[:] = [time.perf_counter(), time.process_time()]


with tempfile.TemporaryDirectory() as folder:
    rung = Rung(label="oracle", spec="oracle", factory=OracleFactory())
    config = EvalConfig(
        suite="arithmetic", rungs=(rung,), out=Path(folder) / "out", repeats=repeats,
        tasks=tasks, concurrency=8, fsync=False,
    )
    run_eval(config, on_record=on_record)
    end_s, end_cpu_s = time.perf_counter() - last[0], time.process_time() - last[1]
print(json.dumps({"end_s": end_s, "end_cpu_s": end_cpu_s}))
"""


def made_eval(out: Path, episodes: int) -> int:
    """The records of an eval of about ``episodes`` oracle episodes; its repeats."""
    tasks = tuple(load_suite("arithmetic"))
    repeats = max(1, episodes // len(tasks))
    rung = Rung(label="oracle", spec="oracle", factory=OracleFactory())
    config = EvalConfig(
        suite="arithmetic", rungs=(rung,), out=out, repeats=repeats, tasks=tasks,
        concurrency=8, fsync=False, report=False,
    )  # fmt: skip
    run_eval(config)
    return repeats


def one(source: str, out: Path, repeats: int, end: int = 0) -> dict[str, float]:
    """The figures of one fresh process on ``source``; ``end``: a whole eval of so many
    episodes instead (``END``)."""
    env = dict(os.environ, PYTHONPATH=source)
    arguments = [END, str(end)] if end else [CHILD, str(out), str(repeats)]
    done = subprocess.run(
        [sys.executable, "-c", *arguments],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", required=True, metavar="OLD/src")
    parser.add_argument("--episodes", type=int, default=1024)
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--end", action="store_true", help="time a whole eval's end instead")
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent / "src")
    rows: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"
        repeats = 0 if args.end else made_eval(out, args.episodes)
        end = args.episodes if args.end else 0
        recorded = len(list((out / "episodes").glob("*.json"))) if repeats else args.episodes
        for _ in range(args.pairs):
            rows["this"].append(one(here, out, repeats, end))
            rows["other"].append(one(args.compare, out, repeats, end))
    result: dict[str, object] = {"episodes": recorded, "pairs": args.pairs}
    for figure in rows["this"][0]:
        this, other = (statistics.median(r[figure] for r in rows[side]) for side in rows)
        result[figure] = {"this": round(this, 3), "other": round(other, 3)}
        result[figure.replace("_s", "_ratio")] = round(this / other, 2)
    result["load"] = round(os.getloadavg()[0], 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
