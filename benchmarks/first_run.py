"""A fresh process's first run against its warm runs, and ``reactloop run``'s start-up to its
first model request.

    python benchmarks/first_run.py [--processes 9] [--steps 10] [--requests 9]

**First run**: each of ``--processes`` fresh interpreters imports reactloop, then times five
runs of ``--steps`` steps one after the other (a scripted model calling a trivial read-only
tool each step, then answering; no journal, the default time limit): the first pays what is
loaded or set up at first use (the loop's modules load with the first run, by design:
``import reactloop`` stays small), the later four are warm. Wall µs a step: the first run's
and the warm runs' (each process's median), medians over the processes, and first ÷ warm.
The import is timed apart.

**Start-up to the first request**: ``reactloop run "2+3?" --model vllm:fake --base-url URL
--no-trace`` in a fresh process against a fake OpenAI server in this one, which notes when
the request comes: the time from just before the process is started to then, medians of
``--requests``; and the whole command's wall time (its two model calls answered at once).
Bytecode caches are on (``PYTHONDONTWRITEBYTECODE`` unset), as an installed package has them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from reactloop.testing import FakeOpenAIServer, completion, tool_call
from reactloop.testing.fake_openai import RecordedRequest
from reactloop.testing.openai_replies import Reply, json_reply

CHILD = """
import json, sys, time
started = time.perf_counter()
from reactloop import Agent, Limits, ModelTurn, ScriptedModel, ToolCall, tool
imported = time.perf_counter() - started
steps = int(sys.argv[1])

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

def one_run():
    calls = [ToolCall(id=f"c{i}", name="echo", arguments=json.dumps({"n": i}))
             for i in range(steps)]
    turns = [ModelTurn(tool_calls=(call,)) for call in calls] + [ModelTurn(text="done")]
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps)
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits)
    start = time.perf_counter()
    result = agent.run("go")
    assert result.answer == "done", result
    return 1e6 * (time.perf_counter() - start) / steps

print(json.dumps({"import_ms": 1e3 * imported, "runs": [one_run() for _ in range(5)]}))
"""


def first_runs(processes: int, steps: int, env: dict[str, str]) -> dict[str, Any]:
    rows = []
    for _ in range(processes):
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(steps)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        rows.append(json.loads(done.stdout))
    first = statistics.median(r["runs"][0] for r in rows)
    warm = statistics.median(statistics.median(r["runs"][1:]) for r in rows)
    return {
        "steps": steps,
        "processes": processes,
        "import_ms": round(statistics.median(r["import_ms"] for r in rows), 1),
        "first_us_a_step": round(first),
        "warm_us_a_step": round(warm),
        "first_over_warm": round(first / warm, 2),
        "load": round(os.getloadavg()[0], 1),
    }


def to_first_request(requests: int, env: dict[str, str]) -> dict[str, Any]:
    arrived: list[float] = []

    def respond(request: RecordedRequest) -> Reply:
        if any(m["role"] == "tool" for m in request.json["messages"]):
            return json_reply(completion("5"))
        arrived.append(time.perf_counter())
        return json_reply(completion(tool_calls=[tool_call("calculator", {"expression": "2+3"})]))

    firsts, walls = [], []
    with FakeOpenAIServer(responder=respond) as server:
        command = [
            sys.executable, "-m", "reactloop", "run", "2+3?", "--model", "vllm:fake",
            "--base-url", server.base_url, "--no-trace",
        ]  # fmt: skip
        for _ in range(requests):
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, env=env, check=True)
            walls.append(time.perf_counter() - start)
            firsts.append(arrived[-1] - start)
    return {
        "command": "reactloop run --model vllm:fake --base-url URL --no-trace",
        "requests": requests,
        "to_first_request_s": round(statistics.median(firsts), 3),
        "wall_s": round(statistics.median(walls), 3),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=9)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--requests", type=int, default=9)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", CHILD, "1"], env=env, check=True, capture_output=True)
    print(json.dumps(first_runs(args.processes, args.steps, env)), flush=True)
    print(json.dumps(to_first_request(args.requests, env)), flush=True)


if __name__ == "__main__":
    main()
