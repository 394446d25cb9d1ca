"""The child process of ``test_ctrl_c_campaign.py``: scripted runs, each sent SIGINT at a random
(seeded) instant, and each journal checked. Prints one JSON line: the runs, and the problems.

``python ctrl_c_campaign.py MODE RUNS SEED DIR``. MODE: ``here`` (no time limit: tools run on
the loop's thread), ``workers`` (the default time limit: sync tools on worker threads),
``approver`` (``here``, with an approver asked before every call), or ``first MODULE`` (one
run, the first of the process: the SIGINT comes as the run's lazy import of a module reaches
MODULE, sent by an import hook); ``modules`` lists those modules. The loop's own modules load
with the first ``Agent(...)``, before any run; what a first run still imports is what only
some runs need (an observed run's workspace record).

The tool records its executions itself: it is ``dict.update`` of a dict of the run's, so it
has no Python frame a SIGINT could land in after its side effect, and the key it writes is
the call's own argument. Each run is checked: ``Agent.run`` returned; the journal has exactly
one ``stop`` and it is the last event; every call of the journal has exactly one result, the
history too; a call that ran has its real result (``ok``); one that did not is an error.
With tools on workers, a call abandoned by the Ctrl-C may still end on its thread: its result
then says it was interrupted while it ran, which is what the run knew.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from reactloop import Agent, Limits, ScriptedModel, Tool, read_journal
from reactloop.journal.writer import Journal

STEPS = 6
CALLS = 2
SCHEMA = {"type": "object", "additionalProperties": {"type": "integer"}}


def script() -> list[Any]:
    turns: list[Any] = []
    for step in range(STEPS):
        calls = [{"name": "record", "arguments": {f"s{step}c{i}": 1}} for i in range(CALLS)]
        turns.append({"tool_calls": calls})
    turns.append("done")
    return turns


def limits(mode: str) -> Limits:
    return Limits(
        max_model_calls=STEPS + 2,
        max_tool_calls=STEPS * CALLS + 2,
        max_seconds=600.0 if mode == "workers" else None,
        repeat_warn=100,
        repeat_stop=100,
        pingpong_warn=100,
        pingpong_stop=100,
        near_repeat_warn=None,
        near_repeat_stop=None,
        budget_notices=False,
    )


class Signaller:
    """Sends SIGINT after each delay from the run's ``run_start``, unless the run has written
    its ``stop`` (a signal the run could not see would land in this campaign's own code)."""

    def __init__(self, delays: list[float]) -> None:
        self.delays = delays
        self.lock = threading.Lock()
        self.over = False
        self.sent = 0
        self.thread = threading.Thread(target=self._fire, daemon=True)

    def observe(self, event: Any) -> None:
        if event.type == "run_start" and self.delays:
            self.thread.start()
        elif event.type == "stop":
            self.end()

    def end(self) -> None:
        with self.lock:
            self.over = True

    def _fire(self) -> None:
        for delay in self.delays:
            time.sleep(delay)  # the random instant: what the campaign varies
            with self.lock:
                if self.over:
                    return
                os.kill(os.getpid(), signal.SIGINT)
                self.sent += 1


def one_run(mode: str, path: Path, delays: list[float]) -> tuple[list[str], int]:
    store: dict[str, int] = {}
    record = Tool.from_schema("record", "Record a key.", SCHEMA, store.update, strict=False)
    signaller = Signaller(delays)
    approve = (lambda call, tool: True) if mode == "approver" else None
    agent = Agent(
        ScriptedModel(script(), keep_requests=False),
        [record],
        limits=limits(mode),
        journal=Journal(path),
        observers=[signaller.observe],
        approve=approve,
    )
    result = None
    problems: list[str] = []
    try:
        result = agent.run("go")
    except KeyboardInterrupt:
        problems.append("KeyboardInterrupt escaped Agent.run")
    signaller.end()
    if signaller.thread.ident is not None:
        signaller.thread.join()
    problems += check(read_journal(path), store, result, tolerant=mode == "workers")
    return problems, signaller.sent


def check(
    records: list[dict[str, Any]], store: dict[str, int], result: Any, *, tolerant: bool
) -> list[str]:
    problems = []
    stops = [r for r in records if r["type"] == "stop"]
    last = records[-1]["type"] if records else "none"
    if len(stops) != 1 or last != "stop":
        problems.append(f"{len(stops)} stop events, the last event is {last}")
    calls = {}
    for r in records:
        if r["type"] == "turn":
            for call in r["turn"]["tool_calls"]:
                calls[call["id"]] = call
    results: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["type"] == "tool_result":
            results.setdefault(r["result"]["call_id"], []).append(r["result"])
    for call_id, call in calls.items():
        got = results.get(call_id, [])
        if len(got) != 1:
            problems.append(f"{call_id}: {len(got)} results in the journal")
            continue
        (key,) = json.loads(call["arguments"])
        ran, outcome = key in store, got[0]
        abandoned = tolerant and "interrupted while it ran" in (outcome["error"] or "")
        if ran and not outcome["ok"] and not abandoned:
            problems.append(f"{call_id} ran, and its result says: {outcome['error']}")
        if not ran and outcome["ok"]:
            problems.append(f"{call_id} did not run, and its result is ok")
    if result is not None:
        answered = [m.tool_call_id for m in result.history if m.role == "tool"]
        if sorted(answered) != sorted(calls):
            problems.append(f"the history answers {answered}, the turns made {sorted(calls)}")
        if stops and stops[-1]["stop_reason"] != str(result.stop_reason):
            problems.append("the RunResult and the journal's stop disagree")
    return problems


class SignalOnImport:
    """A finder that finds nothing: it sends SIGINT when ``module`` is first looked for."""

    def __init__(self, module: str) -> None:
        self.module = module

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == self.module:
            self.module = ""
            os.kill(os.getpid(), signal.SIGINT)


def timed_run(mode: str, path: Path) -> float:
    started = time.perf_counter()
    one_run(mode, path, [])
    return time.perf_counter() - started


def main() -> None:
    mode = sys.argv[1]
    if mode in ("modules", "first"):  # the loop's modules load with the first ``Agent``
        Agent(ScriptedModel([]))
    if mode == "modules":  # what the first run imports: where ``first`` may interrupt it
        before = set(sys.modules)
        one_run("here", Path(sys.argv[2]) / "calibration.jsonl", [])
        loaded = sorted(m for m in set(sys.modules) - before if m.startswith("reactloop."))
        print(json.dumps({"modules": loaded}))
        return
    if mode == "first":
        sys.meta_path.insert(0, SignalOnImport(sys.argv[2]))
        path = Path(sys.argv[3]) / "first.jsonl"
        problems, sent = one_run("here", path, [])
        stops = [r["stop_reason"] for r in read_journal(path) if r["type"] == "stop"]
        if stops != ["cancelled"]:
            problems.append(f"the run's stops: {stops}, not one cancelled")
        print(json.dumps({"runs": 1, "signalled": 1, "problems": problems}))
        return
    mode, runs, seed, folder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    rng = random.Random(seed)
    span = min(timed_run(mode, folder / f"warm{i}.jsonl") for i in range(3))
    failed: list[str] = []
    signalled = 0
    for index in range(runs):
        delays = [rng.uniform(0, span * 0.8)]
        if rng.random() < 0.3:  # a second Ctrl-C soon after, often while the run finishes
            delays.append(rng.uniform(0, span * 0.3))
        problems, sent = one_run(mode, folder / f"run{index}.jsonl", delays)
        signalled += sent > 0
        failed += [f"run {index} (delays {delays}): {p}" for p in problems]
    print(json.dumps({"runs": runs, "signalled": signalled, "span": span, "problems": failed}))


if __name__ == "__main__":
    main()
