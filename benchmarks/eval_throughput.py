"""``reactloop eval`` throughput against a fake OpenAI server whose calls take a set latency.

    python benchmarks/eval_throughput.py [--latency 1.0 0.05] [--concurrency 32 128 512]
                                         [--waves 1 3] [--storm] [--rss 1000 20000]
                                         [--workers 1] [--ray-nodes 1 2]

Each episode makes two model calls (a calculator call, then the answer), so at concurrency C
the ideal steady rate is C / (2 × latency) episodes a second. The steady rate is measured as
the marginal one between a small and a large eval (``--waves``: C × 1 and C × 3 episodes, or
C × 4 and C × 12 below 0.5 s), so start-up and the report (the fixed cost: ``fixed_s``, and
``report_s`` from the last record to the end) do not count. The floor is a bare
client: the SDK's own ``AsyncOpenAI`` in a minimal loop, no harness, making the same calls at
the same concurrency against the same server. The harness's CPU per model call is this
process's CPU during the large eval divided by its calls (it includes the SDK's; with
``--workers`` above 1 the workers' CPU is not in it). The fake
server (``reactloop.testing``) runs in a child process with a listen backlog of 2,048, so its
threads share neither this interpreter nor its accept queue. ``--storm``: every third call
refused with ``Retry-After: 1`` for 10 s. ``--rss``: the driver's RSS after N episodes.
``--ray-nodes``: the Ray backend on a local cluster of N raylets (``ray.cluster_utils``), one
actor and ``--ray-per-node`` episodes in flight per node, at 1 s a call (``ray_nodes_row``).
Figures taken on a loaded machine say so: the load average is printed with each row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from reactloop.eval import EvalConfig, Rung, run_eval
from reactloop.eval.tasks.tasks import Task

SERVER = """
import sys, threading, time
from reactloop.testing import FakeOpenAIServer, completion, tool_call
from reactloop.testing.openai_replies import error_reply, json_reply

latency, storm = float(sys.argv[1]), float(sys.argv[2])
count, lock, start = [0], threading.Lock(), [None]

def respond(request):
    with lock:
        count[0] += 1
        number = count[0]
        start[0] = start[0] or time.monotonic()
    if storm and number % 3 == 0 and time.monotonic() - start[0] < storm:
        return error_reply(429, {"error": {"message": "rate limited"}},
                           headers={"retry-after": "1"})
    if any(m["role"] == "tool" for m in request.json["messages"]):
        return json_reply(completion("The total is 391."), delay=latency)
    body = completion(tool_calls=[tool_call("calculator", {"expression": "17 * 23"})])
    return json_reply(body, delay=latency)

with FakeOpenAIServer(responder=respond, backlog=2048) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""
CALLS_PER_EPISODE = 2


def tasks(count: int) -> tuple[Task, ...]:
    return tuple(
        Task(id=f"t{n:05d}", task=f"What is 17 * 23? (case {n})", expected=391)
        for n in range(count)
    )


class Server:
    def __init__(self, latency: float, storm: float = 0.0) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(latency), str(storm)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()

    def close(self) -> None:
        self.process.communicate("")


WORKERS = [1]


def eval_once(base_url: str, episodes: int, concurrency: int) -> dict[str, Any]:
    rung = Rung(label="fake", spec="vllm:fake", base_url=base_url)
    with tempfile.TemporaryDirectory() as folder:
        config = EvalConfig(
            suite="bench",
            rungs=(rung,),
            out=Path(folder) / "out",
            repeats=1,
            tasks=tasks(episodes),
            concurrency=concurrency,
            workers=WORKERS[0],
            fsync=False,
        )
        last = [0.0]
        cpu, wall = time.process_time() + _workers_cpu(), time.perf_counter()
        outcome = run_eval(config, on_record=lambda r: last.__setitem__(0, time.perf_counter()))
        end = time.perf_counter()
        return {
            "wall": end - wall,
            "report": end - last[0],
            "cpu": time.process_time() + _workers_cpu() - cpu,
            "statuses": sorted({str(r.status) for r in outcome.records}),
            "errored": outcome.errored,
            "endpoints": outcome.endpoints,
        }


def _workers_cpu() -> float:
    """The CPU seconds of the eval's worker processes so far: the forkserver forks and reaps
    them, so their time is in its children's (``cutime``, ``cstime`` of /proc/PID/stat)."""
    import multiprocessing.forkserver

    pid = getattr(multiprocessing.forkserver._forkserver, "_forkserver_pid", None)
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0  # no forkserver yet (one process), or no /proc
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def _bare(base_url: str, episodes: int, concurrency: int) -> float:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)
    tool: Any = {"type": "function", "function": {"name": "calculator", "parameters": {}}}

    async def episode(n: int) -> None:
        async with gate:
            messages: list[Any] = [{"role": "user", "content": f"What is 17 * 23? ({n})"}]
            first = await client.chat.completions.create(
                model="fake", messages=messages, tools=[tool]
            )
            call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
            messages += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": '{"ok": true}'},
            ]
            await client.chat.completions.create(model="fake", messages=messages, tools=[tool])

    start = time.perf_counter()
    await asyncio.gather(*(episode(n) for n in range(episodes)))
    await client.close()
    return time.perf_counter() - start


def bare_client(base_url: str, episodes: int, concurrency: int) -> float:
    return asyncio.run(_bare(base_url, episodes, concurrency))


def steady(base_url: str, latency: float, concurrency: int, waves: list[int]) -> dict[str, Any]:
    small, large = (concurrency * w for w in waves)
    a, b = eval_once(base_url, small, concurrency), eval_once(base_url, large, concurrency)
    rate = (large - small) / (b["wall"] - a["wall"])
    bare_a, bare_b = (bare_client(base_url, n, concurrency) for n in (small, large))
    floor = (large - small) / (bare_b - bare_a)
    ideal = concurrency / (CALLS_PER_EPISODE * latency)
    return {
        "latency_s": latency,
        "concurrency": concurrency,
        "episodes": [small, large],
        "wall_s": [round(a["wall"], 2), round(b["wall"], 2)],
        "fixed_s": round(a["wall"] - small / rate, 2),
        "report_s": round(a["report"], 2),
        "rate": round(rate, 1),
        "ideal": round(ideal, 1),
        "floor": round(floor, 1),
        "of_ideal": round(rate / ideal, 3),
        "of_floor": round(rate / floor, 3),
        "workers": WORKERS[0],
        "cpu_ms_per_call": round(1000 * b["cpu"] / (large * CALLS_PER_EPISODE), 3),
        "errored": a["errored"] + b["errored"],
        "load": round(os.getloadavg()[0], 1),
    }


def storm(concurrency: int) -> dict[str, Any]:
    server = Server(0.05, storm=10.0)
    try:
        run = eval_once(server.base_url, 128, concurrency)
    finally:
        server.close()
    (endpoint,) = run["endpoints"]
    return {
        "storm": "every third call 429, Retry-After 1, for 10 s",
        "episodes": 128,
        "statuses": run["statuses"],
        "errored": run["errored"],
        "refusals": endpoint["overloads"],
        "min_cap": endpoint["min_cap"],
        "wall_s": round(run["wall"], 2),
        "load": round(os.getloadavg()[0], 1),
    }


def rss_curve(points: list[int], concurrency: int) -> dict[str, Any]:
    server = Server(0.0)
    curve = {}
    try:
        for episodes in points:
            eval_once(server.base_url, episodes, concurrency)
            curve[episodes] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    finally:
        server.close()
    ratio = curve[points[-1]] / curve[points[0]]
    return {"rss_mb_after": curve, "ratio": round(ratio, 2), "load": round(os.getloadavg()[0], 1)}


RAY_PER_NODE = [16]  # episodes in flight per node, as each machine of a cluster would add


def _ray_eval(base_url: str, episodes: int, address: str, nodes: int) -> list[float]:
    """When each record arrived, in order."""
    rung = Rung(label="fake", spec="vllm:fake", base_url=base_url)
    arrived: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        config = EvalConfig(
            suite="bench", rungs=(rung,), out=Path(folder) / "out", repeats=1,
            tasks=tasks(episodes), concurrency=RAY_PER_NODE[0] * nodes, backend="ray",
            ray_address=address, ray_actors=nodes, fsync=False, report=False,
        )  # fmt: skip
        outcome = run_eval(config, on_record=lambda r: arrived.append(time.perf_counter()))
    assert outcome.errored == 0 and {r.status for r in outcome.records} == {"passed"}
    return arrived


def ray_nodes_row(nodes: int, latency: float = 1.0, waves: int = 4) -> dict[str, Any]:
    """The steady rate of the Ray backend on a local cluster of ``nodes`` raylets (each
    with 1 CPU), ``RAY_PER_NODE`` (``--ray-per-node``) episodes in flight per node: the
    episodes recorded after the first wave over the time they took (each eval starts its
    actors afresh, seconds of CPU on a loaded machine, so start-up is left out)."""
    import ray
    from ray.cluster_utils import Cluster

    cluster: Any = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    server = Server(latency)
    concurrency = RAY_PER_NODE[0] * nodes
    try:
        arrived = _ray_eval(server.base_url, concurrency * waves, cluster.address, nodes)
    finally:
        server.close()
        ray.shutdown()
        cluster.shutdown()
    rate = (len(arrived) - concurrency) / (arrived[-1] - arrived[concurrency - 1])
    ideal = concurrency / (CALLS_PER_EPISODE * latency)
    return {
        "ray_nodes": nodes,
        "latency_s": latency,
        "concurrency": concurrency,
        "episodes": len(arrived),
        "rate": round(rate, 1),
        "ideal": round(ideal, 1),
        "of_ideal": round(rate / ideal, 3),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, nargs="*", default=[1.0, 0.05])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128, 512])
    parser.add_argument("--waves", type=int, nargs=2, help="default: 1 3 (4 12 below 0.5 s)")
    parser.add_argument("--storm", action="store_true")
    parser.add_argument("--rss", type=int, nargs="*")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--ray-nodes", type=int, nargs="*", help="e.g. 1 2 (only these rows)")
    parser.add_argument("--ray-per-node", type=int, default=16)
    args = parser.parse_args()
    RAY_PER_NODE[0] = args.ray_per_node
    if args.ray_nodes:
        for nodes in args.ray_nodes:
            print(json.dumps(ray_nodes_row(nodes)))
        return
    WORKERS[0] = args.workers
    for latency in args.latency:
        server = Server(latency)
        try:
            eval_once(server.base_url, 8, 4)  # warm-up: imports, the first clients
            for concurrency in args.concurrency:
                waves = args.waves or ([1, 3] if latency >= 0.5 else [4, 12])
                print(json.dumps(steady(server.base_url, latency, concurrency, waves)))
        finally:
            server.close()
    if args.storm:
        print(json.dumps(storm(64)))
    if args.rss:
        print(json.dumps(rss_curve(args.rss, 64)))


if __name__ == "__main__":
    main()
