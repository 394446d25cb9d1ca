"""``reactloop eval`` against Inspect AI, the same eval on the same fake server, side by side.

    python benchmarks/eval_inspect.py [--rows 64:384 128:768 512:1024 512:3072]
                                      [--latency 1.0] [--inspect-python PYTHON]
                                      [--tools reactloop inspect] [--compare SRC ...]
                                      [--pairs P]

Each row is C:N, N two-call episodes (a calculator call, then the answer "391") at
concurrency C, run once by each tool as one command in a fresh process: ``python -m
reactloop eval`` (``--workers auto``) and ``inspect eval`` (Inspect's openai provider on the
chat-completions API, ``--max-connections`` and ``--max-samples`` C). Both talk to one fake
OpenAI server (a child process on 127.0.0.1) that answers each request after ``--latency``
seconds and notes when each request came. Figures of a command:

- **wall**: its start to its exit (start-up, the eval, the report or log), and **fixed**:
  the wall time outside the active span below (its start to its first request, and its last
  reply to its exit);
- **active rate**: episodes over the span from its first request to its last reply, and
  **% of ideal** against C / (2 × latency) (the start and the end left out);
- **CPU / call**: the CPU of its whole process tree (workers, forkserver, report child:
  reaped through a child subreaper) over its 2 × N model calls (``calls`` is what the server
  counted);
- **peak PSS**: the tree's proportional set size summed (``/proc/PID/smaps_rollup``: a page
  shared by n processes counts 1/n in each, so forked workers' shared pages count once), and
  **peak RSS**, its resident memory summed (those pages counted in each process): both
  sampled every 0.2 s, the peak of each sum.

Inspect is optional: without ``inspect_ai`` importable by ``--inspect-python`` (default: this
interpreter) its rows are skipped with one line. It is not a dependency of reactloop; install
it apart (``python -m venv --system-site-packages V && V/bin/pip install inspect_ai``, then
``--inspect-python V/bin/python``). Its pitfalls: without ``-M responses_api=false`` its
``openai/`` provider uses the Responses API and every sample errors while the command still
exits 0 (so its log is read here, not its exit code); the task file is given as a
relative path; and 0.3.285 sent its requests through OpenAI's batch API here unless given
``--batch false`` (the fake server has no such route: nothing ran, and the command waited).
``--compare SRC ...`` runs reactloop's command of each row once more per source tree given
(``PYTHONPATH=SRC``, e.g. ``git archive COMMIT src | tar -x -C /tmp/old``), right after this
tree's, so that a change is measured before and after side by side (its rows' ``tool`` is
``reactloop@SRC``); ``--pairs P`` runs the whole sequence P times. One JSON line a row and
tool; the load average is printed with each.

Every run's files are kept until the last row is done, then removed: on an ext4 without a
journal (these machines' root) a new file's inode is chosen past those freed in the last
minutes (the kernel's ``recently_deleted``, a block looked up for each), so removing one run's
10,000 files just before the next made the next spend up to a sixth of its workers' CPU
creating files (``perf``: ``ext4_create`` → ``find_inode_bit``), the more the later in a
sequence. Files removed just before an invocation (an earlier one's) still cost its first runs.
"""

from __future__ import annotations

import argparse
import ctypes
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

SERVER = """
import json, sys, threading, time
from reactloop.testing import FakeOpenAIServer, completion, tool_call
from reactloop.testing.openai_replies import json_reply

latency = float(sys.argv[1])
lock, times = threading.Lock(), []

def respond(request):
    body = request.json
    if body.get("model") == "__stats__":  # the benchmark asks for the times, which restart
        with lock:
            stats = {"count": len(times), "first": min(times, default=0),
                     "last": max(times, default=0)}
            times.clear()
        return json_reply(completion(json.dumps(stats)))
    with lock:
        times.append(time.monotonic())
    if any(m["role"] == "tool" for m in body["messages"]):
        return json_reply(completion("The total is 391."), delay=latency)
    body = completion(tool_calls=[tool_call("calculator", {"expression": "17 * 23"})])
    return json_reply(body, delay=latency)

with FakeOpenAIServer(responder=respond, backlog=4096) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""

INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool


@tool
def calculator():
    async def execute(expression: str) -> str:
        """Evaluate an arithmetic expression.

        Args:
            expression: The expression, e.g. 17 * 23.
        """
        left, right = expression.split("*")
        return str(int(left) * int(right))

    return execute


@task
def arithmetic(episodes: int = 8):
    samples = [
        Sample(id=n, input=f"What is 17 * 23? (case {n})", target="391") for n in range(episodes)
    ]
    return Task(dataset=samples, solver=[use_tools(calculator()), generate()], scorer=includes())
'''

INSPECT_LOG = """
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log
(log,) = list_eval_logs(sys.argv[1])
log = read_eval_log(log, header_only=True)
results = log.results
scores = {m: v.value for s in (results.scores if results else []) for m, v in s.metrics.items()}
print(json.dumps({"status": log.status, "completed": results.completed_samples if results else 0,
                  "scores": scores, "error": str(log.error)[:500] if log.error else None}))
"""

CALLS_PER_EPISODE = 2
PR_SET_CHILD_SUBREAPER = 36


class Server:
    def __init__(self, latency: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()

    def stats(self) -> dict[str, float]:
        """The count and the first and last times of the requests since the last call."""
        body = json.dumps({"model": "__stats__", "messages": []}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            stats: dict[str, float] = json.loads(
                json.loads(reply.read())["choices"][0]["message"]["content"]
            )
        return stats

    def close(self) -> None:
        self.process.communicate("")


def _tree(root: int) -> set[int]:
    """``root`` and its descendants (by /proc's parent ids)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)] = int(stat[1])
    tree, grown = {root}, True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grown = bool(more)
    return tree


def _memory(pid: int) -> tuple[int, int]:
    """The PSS and RSS of ``pid`` in bytes (``smaps_rollup``; 0, 0 once it has exited)."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith(b"Rss:"):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


def _tree_memory(root: int) -> tuple[int, int]:
    """The summed PSS and RSS in bytes of ``root``'s process tree."""
    pss = rss = 0
    for pid in _tree(root):
        one_pss, one_rss = _memory(pid)
        pss, rss = pss + one_pss, rss + one_rss
    return pss, rss


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``command``; its wall time, its process tree's CPU and peak summed PSS and RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = [0, 0]

    def sample() -> None:
        while child.poll() is None:
            pss, rss = _tree_memory(child.pid)
            peak[:] = max(peak[0], pss), max(peak[1], rss)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if child.returncode != 0:
        raise SystemExit(f"{command[:4]} exited {child.returncode}:\n{err[-3000:]}")
    return {"wall": wall, "cpu": cpu, "pss": peak[0], "rss": peak[1], "stdout": out}


def _reap_orphans() -> None:
    """Wait for the descendants left to this subreaper (a forkserver and its workers outlive
    their parent by a moment), so that their CPU is in RUSAGE_CHILDREN."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def run_reactloop(
    server: Server, concurrency: int, episodes: int, folder: Path, src: str | None = None
) -> dict[str, Any]:
    """``src``: the ``src`` folder of another tree to run instead of this one's."""
    suite = folder / "suite.jsonl"
    lines = (
        json.dumps({"id": f"t{n:05d}", "task": f"What is 17 * 23? (case {n})", "expected": 391})
        for n in range(episodes)
    )
    suite.write_text("\n".join(lines) + "\n")
    out = folder / "reactloop-out"
    command = [
        sys.executable, "-m", "reactloop", "eval", "--suite", str(suite), "--model", "vllm:fake",
        "--base-url", server.base_url, "--repeats", "1", "--concurrency", str(concurrency),
        "--out", str(out), "--no-progress",
    ]  # fmt: skip
    env = dict(os.environ) if src is None else dict(os.environ, PYTHONPATH=src)
    figures = timed(command, folder, env)
    statuses = [json.loads(p.read_text())["status"] for p in (out / "episodes").glob("*.json")]
    figures["passed"] = statuses.count("passed")
    return figures


def run_inspect(
    server: Server, concurrency: int, episodes: int, folder: Path, python: str
) -> dict[str, Any]:
    (folder / "arithmetic_task.py").write_text(INSPECT_TASK)
    logs = folder / "inspect-logs"
    command = [
        python, "-m", "inspect_ai", "eval", "arithmetic_task.py",  # relative: Inspect's way
        "--model", "openai/fake", "-M", "responses_api=false",
        "--model-base-url", server.base_url, "-T", f"episodes={episodes}",
        "--max-connections", str(concurrency), "--max-samples", str(concurrency),
        "--log-dir", str(logs), "--display", "none", "--batch", "false",
    ]  # fmt: skip
    env = dict(os.environ, OPENAI_API_KEY="bench", INSPECT_LOG_DIR=str(logs))
    figures = timed(command, folder, env)
    read = subprocess.run(
        [python, "-c", INSPECT_LOG, str(logs)], capture_output=True, text=True, check=True
    )
    log = json.loads(read.stdout)
    figures["passed"] = round(log["scores"].get("accuracy", 0) * log["completed"])
    figures["log"] = log
    return figures


def row(tool: str, figures: dict[str, Any], stats: dict[str, float], args: Any) -> dict[str, Any]:
    concurrency, episodes, latency = args
    active = stats["last"] - stats["first"] + latency
    ideal = concurrency / (CALLS_PER_EPISODE * latency)
    rate = episodes / active
    return {
        "tool": tool,
        "concurrency": concurrency,
        "episodes": episodes,
        "passed": figures["passed"],
        "calls": stats["count"],
        "wall_s": round(figures["wall"], 1),
        "fixed_s": round(figures["wall"] - active, 1),
        "active_rate": round(rate, 1),
        "ideal": round(ideal, 1),
        "of_ideal": round(rate / ideal, 3),
        "cpu_ms_per_call": round(1000 * figures["cpu"] / (CALLS_PER_EPISODE * episodes), 2),
        "peak_pss_mb": round(figures["pss"] / 2**20),
        "peak_rss_mb": round(figures["rss"] / 2**20),
        "load": round(os.getloadavg()[0], 1),
    }


def inspect_version(python: str) -> str | None:
    found = subprocess.run(
        [python, "-c", "import inspect_ai; print(inspect_ai.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() if found.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", nargs="+", default=["64:384", "128:768", "512:1024", "512:3072"])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--inspect-python", default=sys.executable)
    parser.add_argument("--tools", nargs="+", default=["reactloop", "inspect"])
    parser.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="SRC",
        help="also run reactloop's rows from these trees' sources, taking turns with this "
        "one's (git archive REV src | tar -x -C /tmp/old)",
    )
    parser.add_argument("--pairs", type=int, default=1, help="turns of each row")
    args = parser.parse_args()
    tools = list(args.tools)
    if "reactloop" in tools:
        at = tools.index("reactloop") + 1
        tools[at:at] = [f"reactloop@{src}" for src in args.compare]
    tools *= args.pairs
    version = inspect_version(args.inspect_python) if "inspect" in tools else None
    if "inspect" in tools and version is None:
        print(f"inspect_ai is not importable by {args.inspect_python}: its rows are skipped")
        tools = [t for t in tools if t != "inspect"]
    import reactloop

    print(json.dumps({"reactloop": reactloop.__version__, "inspect_ai": version}))
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    server = Server(args.latency)
    runs = itertools.count()
    try:
        with tempfile.TemporaryDirectory() as kept:  # removed at the end: see the docstring
            for spec in args.rows:
                concurrency, episodes = (int(part) for part in spec.split(":"))
                for tool in tools:
                    folder = Path(kept) / str(next(runs))
                    folder.mkdir()
                    server.stats()  # the times restart
                    if tool.startswith("reactloop"):
                        src = tool.partition("@")[2] or None
                        figures = run_reactloop(server, concurrency, episodes, folder, src)
                    else:
                        figures = run_inspect(
                            server, concurrency, episodes, folder, args.inspect_python
                        )
                    stats = server.stats()
                    shape = (concurrency, episodes, args.latency)
                    print(json.dumps(row(tool, figures, stats, shape)), flush=True)
    finally:
        server.close()


if __name__ == "__main__":
    main()
