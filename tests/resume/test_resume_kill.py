"""Kill tests: a 30-step run with a side-effect tool and an idempotent one, both counting
their executions in a file, SIGKILLed at seeded random moments (after an event, inside a
tool before or after its side effect, halfway through a journal line), with ``fsync`` and
without, then resumed — each resume killed again, at another moment — to the end. Over the
scripted model, and over real HTTP against the fake OpenAI and Anthropic servers.

Checked each time: the journal ends with one ``stop`` (the only one); no call with a
recorded result ran twice; an uncertain call ran again only when its tool is idempotent
(no approver: the side effect is never repeated); the final history is the uninterrupted
run's apart from the marked interruptions. ``REACTLOOP_KILL_RUNS=N`` runs N seeds of the
scripted run (with fsync and without) and N // 2 of each HTTP one
(``REACTLOOP_KILL_HTTP_RUNS`` sets those apart). The kills landed are printed at the end of
the module: 60 seeds land 212 kills of the scripted run, which ``.ci/run`` runs on its first
Python (the issue asks for 200), with one seed of each HTTP run; the default is 2 (~6 kills).
"""

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

from reactloop import Agent, Journal, read_journal
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    RecordedRequest,
    completion,
    json_reply,
    message,
    thinking,
    tool_call,
    tool_use,
)

sys.path.insert(0, str(Path(__file__).parent))
import resume_kill_child as child

RUNS = int(os.environ.get("REACTLOOP_KILL_RUNS", "2"))
HTTP_RUNS = int(os.environ.get("REACTLOOP_KILL_HTTP_RUNS", str(max(1, RUNS // 2))))
UNCERTAIN = "may already have run"
KILLS: Counter[str] = Counter()  # the kills landed, by variant


@pytest.fixture(scope="module", autouse=True)
def kills_landed(request: pytest.FixtureRequest) -> Any:
    """After the module: how many kills its runs landed (the issue asks for 200 of the
    scripted run: ``REACTLOOP_KILL_RUNS`` sets how many seeds get there)."""
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is None or capture is None or not KILLS:
        return
    counts = ", ".join(f"{variant} {n}" for variant, n in sorted(KILLS.items()))
    with capture.global_and_fixture_disabled():
        reporter.write_line(f"\nkill test: {RUNS} seeds, kills landed: {counts}")


def kill_spec(rng: random.Random, *, first: bool = False) -> str:
    """Where to kill; the first process is always killed within its run (about 190 events)."""
    kind = rng.choice(["event", "event", "tool", "write"] + ([] if first else ["none"]))
    if kind == "event":
        return f"event:{rng.randint(1, 150)}"
    if kind == "tool":
        return f"tool:{rng.randint(1, 30)}:{rng.choice(['before', 'after'])}"
    if kind == "write":
        return f"write:{rng.randint(1, 150)}"
    return "none"


def spawn(mode: str, tmp: Path, spec: str, fsync: bool, provider: str, url: str) -> int:
    out = tmp / "out.json"
    command = [
        sys.executable, str(Path(child.__file__)), mode, str(tmp / "run.jsonl"),
        str(tmp / "counter.txt"), spec, "1" if fsync else "0", provider, url, str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, -9), done.stderr
    return done.returncode


def responder(provider: str) -> Any:
    """Each step's reply from the request alone (the assistant messages it holds), so that a
    resumed process gets the reply the killed one would have."""

    def reply(request: RecordedRequest) -> Any:
        body = request.json or {}
        step = sum(m.get("role") == "assistant" for m in body.get("messages", []))
        if step >= child.STEPS:
            return json_reply(completion("done")) if provider == "openai" else message(text="done")
        name, arguments = child.step_call(step)
        if provider == "openai":
            call = tool_call(name, arguments, id=f"c{step}")
            return json_reply(completion(f"step {step}", tool_calls=[call]))
        blocks = [thinking(f"step {step}", f"sig-{step}"), tool_use(name, arguments, id=f"t{step}")]
        return message(content=blocks)

    return reply


def uninterrupted(tmp: Path, provider: str, url: str) -> list[dict[str, Any]]:
    killer = child.Killer("none")
    with Journal(tmp / "reference.jsonl") as journal:
        agent = Agent(
            child.model(provider, url),
            child.tools(tmp / "reference-counter.txt", killer),
            journal=journal,
            limits=child.LIMITS,
        )
        result = agent.run("count to thirty")
    assert result.answer == "done"
    return [m.to_dict() for m in result.history]


def kill_and_resume(tmp: Path, seed: int, fsync: bool, provider: str, url: str) -> int:
    """Run, then resume until the run stops; the number of kills."""
    rng = random.Random(seed)
    mode = "run"
    for kills in range(40):
        spec = kill_spec(rng, first=kills == 0) if kills < 30 else "none"
        if spawn(mode, tmp, spec, fsync, provider, url) == 0:
            return kills
        events = read_journal(tmp / "run.jsonl") if (tmp / "run.jsonl").exists() else []
        mode = "resume" if any(e["type"] == "run_start" for e in events) else "run"
    raise AssertionError("the run never finished")


def check(tmp: Path, reference: list[dict[str, Any]]) -> None:
    events = read_journal(tmp / "run.jsonl")
    assert [e["type"] for e in events].count("stop") == 1 and events[-1]["type"] == "stop"
    assert events[-1]["stop_reason"] == "final_answer"
    assert [e["type"] for e in events].count("run_start") == 1  # one run
    counter = tmp / "counter.txt"
    runs = Counter(counter.read_text().splitlines() if counter.exists() else [])
    uncertain = {
        c["call_id"]: c["name"]
        for e in events
        if e["type"] == "resume"
        for c in e["calls"]
        if c["state"] == "uncertain"
    }
    for line, count in runs.items():
        assert count <= (2 if line.startswith("put") else 1), (line, count)
    executed = [
        e["result"] for e in events if e["type"] == "tool_result" and e["result"]["executed"]
    ]
    ids = Counter(r["call_id"] for r in executed)
    assert all(count == 1 for count in ids.values())  # no call with a result ran again
    final = json.loads((tmp / "out.json").read_text())["history"]
    told = {m["tool_call_id"] for m in final if m["role"] == "tool" and UNCERTAIN in m["content"]}
    assert set(told) <= {i for i, name in uncertain.items() if name == "bump"}
    assert [m for m in final if m.get("tool_call_id") not in told] == [
        m for m in reference if m.get("tool_call_id") not in told
    ]


@pytest.mark.parametrize("fsync", [False, True], ids=["no-fsync", "fsync"])
@pytest.mark.parametrize("seed", range(RUNS))
def test_killed_scripted_runs_resume_to_the_uninterrupted_history(
    tmp_path: Path, seed: int, fsync: bool
) -> None:
    reference = uninterrupted(tmp_path, "scripted", "")
    kills = kill_and_resume(tmp_path, seed * 2 + fsync, fsync, "scripted", "")
    KILLS["scripted"] += kills
    assert kills >= 1
    check(tmp_path, reference)


def test_the_seeds_kill_at_every_kind_of_moment() -> None:
    specs = [kill_spec(random.Random(seed)).split(":")[0] for seed in range(12)]
    assert {"event", "tool", "write", "none"} <= set(specs)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("seed", range(HTTP_RUNS))
def test_killed_runs_over_http_resume_to_the_uninterrupted_history(
    tmp_path: Path, seed: int, provider: str
) -> None:
    server_type: Any = FakeOpenAIServer if provider == "openai" else FakeAnthropicServer
    with server_type(responder=responder(provider)) as server:
        reference = uninterrupted(tmp_path, provider, server.base_url)
        kills = kill_and_resume(tmp_path, 100 + seed, False, provider, server.base_url)
    KILLS[provider] += kills
    assert kills >= 1
    check(tmp_path, reference)
