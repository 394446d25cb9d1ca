"""``reactloop eval`` throughput against a fake OpenAI server that answers in 50 ms.

    python benchmarks/eval_throughput.py [--episodes 300] [--latency 0.05] [--no-ray]

Each episode makes two model calls (a calculator call, then the answer), so the ideal wall time
at concurrency C is episodes × 2 × latency / C. The fake server (``reactloop.testing``) runs in
a child process, so that its threads do not share this process's interpreter; what this process
spends is the harness's own CPU (model adapter, loop, tools, journal, per-episode records).
The "in-process" rows replace the server by a model that sleeps 50 ms per call and spends no
CPU: what the scheduler and the per-episode bookkeeping alone reach. The Ray rows run the same
episodes as Ray actor calls on a local Ray (started before timing).
The server's sockets get TCP_NODELAY: without it each keep-alive reply waits about 40 ms for
the client's delayed ACK (Nagle), which would swamp the 50 ms being measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reactloop import FunctionModel, ModelRequest, ModelTurn, ToolCall
from reactloop.eval import EvalConfig, Rung, run_eval
from reactloop.eval.report import write_report
from reactloop.eval.tasks import Task

SERVER = """
import socketserver, sys
socketserver.StreamRequestHandler.disable_nagle_algorithm = True  # else ~40 ms per reply
from reactloop.testing import FakeOpenAIServer, completion, tool_call
from reactloop.testing.openai_replies import json_reply

latency = float(sys.argv[1])

def respond(request):
    messages = request.json["messages"]
    if any(m["role"] == "tool" for m in messages):
        body = completion("The total is 391.")
    else:
        body = completion(tool_calls=[tool_call("calculator", {"expression": "17 * 23"})])
    return json_reply(body, delay=latency)

with FakeOpenAIServer(responder=respond) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""
CALLS_PER_EPISODE = 2


def tasks(count: int) -> tuple[Task, ...]:
    return tuple(
        Task(id=f"t{n:04d}", task=f"What is 17 * 23? (case {n})", expected=391)
        for n in range(count)
    )


class SleepyModel:
    """A model that takes ``latency`` seconds and no CPU per call: the scheduler's ceiling."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def __call__(self, episode: object) -> FunctionModel:
        return FunctionModel(self.reply)

    def reply(self, request: ModelRequest) -> ModelTurn:
        time.sleep(self.latency)
        if any(m.role == "tool" for m in request.messages):
            return ModelTurn(text="The total is 391.")
        call = ToolCall(id="c1", name="calculator", arguments='{"expression": "17 * 23"}')
        return ModelTurn(tool_calls=(call,), finish_reason="tool_calls")


def measure(
    base_url: str | None, episodes: int, concurrency: int, backend: str, latency: float = 0.05
) -> dict[str, Any]:
    if base_url is None:
        rung = Rung(label="sleepy", spec="function", factory=SleepyModel(latency))
    else:
        rung = Rung(label="fake", spec="vllm:fake", base_url=base_url, max_retries=0)
    with tempfile.TemporaryDirectory() as folder:
        config = EvalConfig(
            suite="bench",
            rungs=(rung,),
            out=Path(folder) / "out",
            repeats=1,
            tasks=tasks(episodes),
            concurrency=concurrency,
            backend=backend,
            report=False,
        )
        cpu, wall = time.process_time(), time.perf_counter()
        outcome = run_eval(config)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        report_start = time.perf_counter()
        write_report(config.out, outcome.records, k=1)
        report_seconds = time.perf_counter() - report_start
    passed = sum(r["status"] == "passed" for r in outcome.records)
    return {
        "model": "fake OpenAI server" if base_url else "in-process, sleeps",
        "backend": backend,
        "concurrency": concurrency,
        "episodes": episodes,
        "passed": passed,
        "wall_s": round(wall, 3),
        "cpu_ms_per_episode": round(1000 * cpu / episodes, 2),
        "report_s": round(report_seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    rows = []
    try:
        measure(base_url, 8, 4, "local")  # warm-up: imports, the first client
        for concurrency in (32, 128):
            rows.append(measure(base_url, args.episodes, concurrency, "local"))
        for concurrency in (32, 128):
            rows.append(measure(None, args.episodes, concurrency, "local", args.latency))
        if not args.no_ray:
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            measure(base_url, 8, 4, "ray")
            rows.append(measure(base_url, args.episodes, 32, "ray"))
            ray.shutdown()
    finally:
        server.communicate("")
    for row in rows:
        ideal = row["episodes"] * CALLS_PER_EPISODE * args.latency / row["concurrency"]
        row["ideal_s"] = round(ideal, 3)
        row["of_ideal"] = round(ideal / row["wall_s"], 3)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
