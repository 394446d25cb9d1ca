"""Kill tests of a tree of agents (``Agent.as_tool``), three levels deep: a root whose tools are
two workers (the first with a helper agent of its own) and two counting tools (a side effect,
``bump``, and an idempotent one, ``put``), which the workers use too, SIGKILLed at seeded
random moments of the whole tree (after an event of any agent, in a tool of any agent before or
after its side effect, halfway through any journal line), then resumed (``Agent.resume`` on the
root's journal), each resume killed again, to the end.

The root resumed calls the worker it was killed in again (its agent tool is idempotent), and
that worker goes on in its own journal, resumed as a child (``reactloop.subagents``). Checked
each time: the root's journal ends with its one ``stop`` and so does each worker's; no call
with a recorded result ran twice, in any journal of the tree; each ``bump`` whose call has a
result ran exactly once, and an uncertain one never ran again; the root's final history is the
uninterrupted run's apart from a root call it was told may already have run.
``REACTLOOP_KILL_TREE_RUNS=N`` runs N seeds (default 3)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reactloop import Journal, read_journal

sys.path.insert(0, str(Path(__file__).parents[1]))
import resume_kill_child as single
import resume_kill_tree_child as child

RUNS = int(os.environ.get("REACTLOOP_KILL_TREE_RUNS", "3"))
UNCERTAIN = "may already have run"


def kill_spec(rng: random.Random, *, first: bool = False) -> str:
    """Where to kill; the tree writes about 160 journal lines and runs 20 tools."""
    kind = rng.choice(["event", "event", "tool", "write"] + ([] if first else ["none"]))
    if kind == "event":
        return f"event:{rng.randint(1, 150)}"
    if kind == "tool":
        return f"tool:{rng.randint(1, 20)}:{rng.choice(['before', 'after'])}"
    if kind == "write":
        return f"write:{rng.randint(1, 150)}"
    return "none"


def spawn(mode: str, tmp: Path, spec: str) -> int:
    command = [
        sys.executable, str(Path(child.__file__)), mode, str(tmp / "run.jsonl"),
        str(tmp / "counter.txt"), spec, str(tmp / "out.json"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, -9), done.stderr
    return done.returncode


def kill_and_resume(tmp: Path, seed: int) -> int:
    rng = random.Random(seed)
    mode = "run"
    for kills in range(40):
        spec = kill_spec(rng, first=kills == 0) if kills < 30 else "none"
        if spawn(mode, tmp, spec) == 0:
            return kills
        events = read_journal(tmp / "run.jsonl") if (tmp / "run.jsonl").exists() else []
        mode = "resume" if any(e["type"] == "run_start" for e in events) else "run"
    raise AssertionError("the tree never finished")


def uninterrupted(tmp: Path) -> list[dict[str, Any]]:
    with Journal(tmp / "reference.jsonl") as journal:
        root = child.tree(tmp / "reference-counter.txt", single.Killer("none"))
        result = root.run("count, with two workers", journal=journal)
    assert result.answer == "done"
    return [m.to_dict() for m in result.history]


def journals_of_the_tree(root: Path) -> list[Path]:
    """The root's journal and, depth first, the journals its last ``child_start`` of each
    call names, and theirs."""
    last: dict[str, str] = {}
    for event in read_journal(root):
        if event["type"] == "child_start" and event.get("trace"):
            last[event["call_id"]] = event["trace"]
    return [root, *(p for trace in last.values() for p in journals_of_the_tree(Path(trace)))]


def check(tmp: Path, reference: list[dict[str, Any]]) -> None:
    journals = journals_of_the_tree(tmp / "run.jsonl")
    assert len(journals) == 4  # the root, its two workers, the first one's helper
    counter = tmp / "counter.txt"
    runs = Counter(counter.read_text().splitlines())
    for line, count in runs.items():
        assert count <= (2 if line.startswith("put") else 1), (line, count)
    for path in journals:
        events = read_journal(path)
        types = [e["type"] for e in events]
        assert types.count("run_start") == 1 and types.count("stop") == 1, path
        assert types[-1] == "stop" and events[-1]["stop_reason"] == "final_answer", path
        calls = {e["call"]["id"]: e["call"] for e in events if e["type"] == "tool_call"}
        executed = [e["result"] for e in events if e["type"] == "tool_result"]
        executed = [r for r in executed if r["executed"]]
        assert all(n == 1 for n in Counter(r["call_id"] for r in executed).values()), path
        for result in executed:  # a side effect with a result ran exactly once
            call = calls[result["call_id"]]
            if call["name"] == "bump":
                n = json.loads(call["arguments"])["n"]
                assert runs[f"bump {n}"] == 1, (path, n)
    final = json.loads((tmp / "out.json").read_text())["history"]
    told = {m["tool_call_id"] for m in final if m["role"] == "tool" and UNCERTAIN in m["content"]}
    assert [m for m in final if m.get("tool_call_id") not in told] == [
        m for m in reference if m.get("tool_call_id") not in told
    ]
    assert all(
        m["role"] != "tool" or "worker" not in m.get("name", "")
        for m in final
        if m.get("tool_call_id") in told
    )


@pytest.mark.parametrize("seed", range(RUNS))
def test_a_killed_tree_resumes_with_each_side_effect_run_once(tmp_path: Path, seed: int) -> None:
    reference = uninterrupted(tmp_path)
    kills = kill_and_resume(tmp_path, 1000 + seed)
    assert kills >= 1
    check(tmp_path, reference)


def test_a_worker_killed_mid_run_goes_on_in_its_own_journal(tmp_path: Path) -> None:
    """Killed in the helper's first tool (``bump 20``, after its side effect; the third tool
    of the tree): the root resumed calls worker_a again, which resumes and calls the helper
    again, which resumes too (a ``resume`` event in each journal, no journal new)."""
    reference = uninterrupted(tmp_path)
    assert spawn("run", tmp_path, "tool:3:after") == -9
    assert spawn("resume", tmp_path, "none") == 0
    check(tmp_path, reference)
    for name in ("run.worker_a-1.jsonl", "run.worker_a-1.helper-1.jsonl"):
        types = [e["type"] for e in read_journal(tmp_path / name)]
        assert types.count("resume") == 1, name
    assert sorted(p.name for p in tmp_path.glob("run.*.jsonl")) == [
        "run.worker_a-1.helper-1.jsonl",
        "run.worker_a-1.jsonl",
        "run.worker_b-2.jsonl",
    ]  # no agent started afresh
    assert (tmp_path / "counter.txt").read_text().splitlines().count("bump 20") == 1
    worker_result = [
        m
        for m in json.loads((tmp_path / "out.json").read_text())["history"]
        if m.get("name") == "worker_a"
    ]
    assert "worker 0 done" in worker_result[0]["content"]
