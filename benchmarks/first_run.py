"""A fresh process's first run against its warm runs, and ``reactloop run``'s start-up to its
first model request.

    python benchmarks/first_run.py [--processes 9] [--steps 10] [--requests 9] [--against SRC]
                                   [--instructions]

**First run**: each of ``--processes`` fresh interpreters imports reactloop, then five times
builds an ``Agent`` and times one run of ``--steps`` steps (a scripted model calling a trivial
read-only tool each step, then answering; no journal, the default time limit): the first
``Agent(...)`` loads the loop's modules (``import reactloop`` stays small) and has a run
thread ready, so that the first run pays only what is set up at first use; the later four
are warm. Wall µs a step of the first run and of the warm runs (each process's median),
medians over the processes, and first ÷ warm (and the same ratio of the process's CPU time,
steadier on a loaded machine); the first ``Agent(...)`` and a warm one, and
the first ``Agent(...)`` plus its run (what a program's first run costs in all), in µs.
The import is timed apart. ``--against SRC`` (a ``src`` folder, say a checkout of ``main``)
measures that tree too, its processes alternating with these, for figures side by side.

**First run of the OpenAI adapter**: the same, five runs a process of a ``vllm:fake`` model
(a model and an ``Agent`` made for each) against a fake server in the child: a tool call,
then the answer; ms a run, first and warm.

``--instructions`` measures only the first run and a warm one (the second) in machine
instructions, with valgrind's callgrind: steady to about 1% where wall times on a loaded
machine are not; and first ÷ warm of each part of the run (to the first step's tool call,
from each call to the next, to the answer), where the interpreter's own warm-up shows
(docs/benchmarks.md).

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
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
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
    start, cpu = time.perf_counter(), time.process_time()
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits)
    built, built_cpu = time.perf_counter(), time.process_time()
    result = agent.run("go")
    assert result.answer == "done", result
    ran = 1e6 * (time.perf_counter() - built) / steps
    return 1e6 * (built - start), ran, 1e6 * (time.process_time() - built_cpu) / steps

runs = [one_run() for _ in range(5)]
print(json.dumps({"import_ms": 1e3 * imported, "builds": [r[0] for r in runs],
                  "runs": [r[1] for r in runs], "cpu": [r[2] for r in runs]}))
"""


INSTRUCTIONS_CHILD = """
import json, os, sys
from reactloop import Agent, Limits, ModelTurn, ScriptedModel, ToolCall, tool
steps = int(sys.argv[1])

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    os.getppid()  # and at each step's call
    return n

for _ in range(2):
    calls = [ToolCall(id=f"c{i}", name="echo", arguments=json.dumps({"n": i}))
             for i in range(steps)]
    turns = [ModelTurn(tool_calls=(call,)) for call in calls] + [ModelTurn(text="done")]
    limits = Limits(max_model_calls=steps + 1, max_tool_calls=steps)
    agent = Agent(ScriptedModel(turns, keep_requests=False), [echo], limits=limits)
    os.getppid()  # callgrind dumps its counts here: the run is between two marks
    result = agent.run("go")
    os.getppid()
    assert result.answer == "done"
"""


def instructions(steps: int, trees: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Machine instructions (callgrind's ``Ir``, all threads, the hash seed fixed) of a fresh
    process's first run and of its second, and of each part of them between two steps' tool
    calls: marked by calls of ``os.getppid``, before which callgrind writes what it counted
    since the last mark."""
    found: dict[str, Any] = {}
    for name, env in trees.items():
        with tempfile.TemporaryDirectory() as folder:
            out = f"{folder}/callgrind.out"
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            command += ["--dump-before=os_getppid*", sys.executable, "-c", INSTRUCTIONS_CHILD]
            env = env | {"PYTHONHASHSEED": "0"}
            subprocess.run([*command, str(steps)], env=env, capture_output=True, check=True)
            parts = steps + 1  # to the first call, from each call to the next, to the answer
            dumps = [Path(f"{out}.{n}").read_text() for n in range(2, 2 * parts + 3)]
        counts = [int(re.findall(r"^summary: (\d+)", dump, re.M)[0]) for dump in dumps]
        first, warm = counts[:parts], counts[parts + 1 :]  # between them: the second Agent
        found[name] = {
            "first_ir": sum(first),
            "warm_ir": sum(warm),
            "first_over_warm": round(sum(first) / sum(warm), 3),
            "by_part": [round(a / b, 2) for a, b in zip(first, warm, strict=True)],
        }
    return found


HTTP_CHILD = """
import json, time
from reactloop import Agent, tool
from reactloop.models import ModelSettings, resolve_model
from reactloop.testing import FakeOpenAIServer, completion, tool_call
from reactloop.testing.openai_replies import json_reply

def respond(request):
    if any(m["role"] == "tool" for m in request.json["messages"]):
        return json_reply(completion("5"))
    return json_reply(completion(tool_calls=[tool_call("echo", {"n": 5})]))

@tool(read_only=True)
def echo(n: int) -> int:
    "Return n."
    return n

runs = []
with FakeOpenAIServer(responder=respond) as server:
    for _ in range(5):
        model = resolve_model("vllm:fake", ModelSettings(base_url=server.base_url))
        agent = Agent(model, [echo])
        start = time.perf_counter()
        assert agent.run("2+3?").answer == "5"
        runs.append(1e3 * (time.perf_counter() - start))
print(json.dumps(runs))
"""


def http_first_runs(processes: int, trees: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The first run of the OpenAI adapter (a tool call, then the answer, from a fake server in
    the child) against its four later ones, each with a model and an ``Agent`` of its own."""
    rows: dict[str, list[list[float]]] = {name: [] for name in trees}
    for _ in range(processes):
        for name, env in trees.items():
            done = subprocess.run(
                [sys.executable, "-c", HTTP_CHILD], capture_output=True, text=True, env=env
            )
            assert done.returncode == 0, done.stderr[-2000:]
            rows[name].append(json.loads(done.stdout))
    median = statistics.median
    found: dict[str, Any] = {"openai_adapter_runs": processes}
    for name, runs in rows.items():
        first, warm = median(r[0] for r in runs), median(median(r[1:]) for r in runs)
        found[name] = {"first_ms": round(first, 1), "warm_ms": round(warm, 1)}
        found[name]["first_over_warm"] = round(first / warm, 2)
    return found | {"load": round(os.getloadavg()[0], 1)}


def first_runs(processes: int, steps: int, trees: dict[str, dict[str, str]]) -> dict[str, Any]:
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(processes):
        for name, env in trees.items():  # alternating: the trees see the same load
            done = subprocess.run(
                [sys.executable, "-c", CHILD, str(steps)],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            rows[name].append(json.loads(done.stdout))
    return {name: _summary(tree_rows, steps) for name, tree_rows in rows.items()} | {
        "load": round(os.getloadavg()[0], 1)
    }


def _summary(rows: list[dict[str, Any]], steps: int) -> dict[str, Any]:
    median = statistics.median
    first = median(r["runs"][0] for r in rows)
    warm = median(median(r["runs"][1:]) for r in rows)
    return {
        "steps": steps,
        "processes": len(rows),
        "import_ms": round(median(r["import_ms"] for r in rows), 1),
        "first_us_a_step": round(first),
        "warm_us_a_step": round(warm),
        "first_over_warm": round(first / warm, 2),
        "first_over_warm_cpu": round(
            median(r["cpu"][0] for r in rows) / median(median(r["cpu"][1:]) for r in rows), 2
        ),
        "first_agent_us": round(median(r["builds"][0] for r in rows)),
        "warm_agent_us": round(median(median(r["builds"][1:]) for r in rows)),
        "first_agent_and_run_us": round(
            median(r["builds"][0] + steps * r["runs"][0] for r in rows)
        ),
    }


def to_first_request(requests: int, trees: dict[str, dict[str, str]]) -> dict[str, Any]:
    arrived: list[float] = []

    def respond(request: RecordedRequest) -> Reply:
        if any(m["role"] == "tool" for m in request.json["messages"]):
            return json_reply(completion("5"))
        arrived.append(time.perf_counter())
        return json_reply(completion(tool_calls=[tool_call("calculator", {"expression": "2+3"})]))

    firsts: dict[str, list[float]] = {name: [] for name in trees}
    walls: dict[str, list[float]] = {name: [] for name in trees}
    with FakeOpenAIServer(responder=respond) as server:
        command = [
            sys.executable, "-m", "reactloop", "run", "2+3?", "--model", "vllm:fake",
            "--base-url", server.base_url, "--no-trace",
        ]  # fmt: skip
        for _ in range(requests):
            for name, env in trees.items():  # alternating, as the first runs are
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, env=env, check=True)
                walls[name].append(time.perf_counter() - start)
                firsts[name].append(arrived[-1] - start)
    median = statistics.median
    return {
        "command": "reactloop run --model vllm:fake --base-url URL --no-trace",
        "requests": requests,
        "to_first_request_s": {name: round(median(firsts[name]), 3) for name in trees},
        "wall_s": {name: round(median(walls[name]), 3) for name in trees},
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=9)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--requests", type=int, default=9)
    parser.add_argument("--against", help="another tree's src folder, measured alongside")
    parser.add_argument(
        "--instructions", action="store_true", help="only callgrind's counts (slow, steady)"
    )
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {"this": env}
    if args.against:
        trees["against"] = env | {"PYTHONPATH": args.against}
    for tree in trees.values():  # bytecode caches written
        subprocess.run(
            [sys.executable, "-c", CHILD, "1"], env=tree, check=True, capture_output=True
        )
    if args.instructions:
        print(json.dumps(instructions(args.steps, trees)), flush=True)
        return
    print(json.dumps(first_runs(args.processes, args.steps, trees)), flush=True)
    print(json.dumps(http_first_runs(args.processes, trees)), flush=True)
    print(json.dumps(to_first_request(args.requests, trees)), flush=True)


if __name__ == "__main__":
    main()
