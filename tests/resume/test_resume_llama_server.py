"""The kill test once against a real model server: ``reactloop run`` (a subprocess) with
SmolLM2-135M-Instruct behind llama.cpp's C++ ``llama-server`` (prebuilt, from the xllamacpp
wheel: ``tests/llama_server_main.py``), SIGKILLed at seeded moments,
then ``reactloop resume`` to the end.

The server is made deterministic: temperature 0 and a seed on every request, one slot, one
thread, and no prompt cache (each prompt is evaluated whole, so a resumed process gets the
reply the killed one would have got). The model's own chat template has no tools, so the
server gets a ChatML template that has them, with one worked call in its system turn (the
135M model copies it; without it it never writes a call). Between the CLI and the server
sits a recording proxy (``FakeOpenAIServer`` with a responder that forwards each request as
it came): it keeps the bytes of every request, and kills the CLI while one is in flight.

The moments, chosen by the seed, all synchronised on the run itself, never on a clock: a
request in flight (the proxy kills the process it came from), inside a tool before or after
its side effect (the tools of ``resume_kill_child.py``, counting their runs in a file), right
after a journal line, halfway through one (a torn line). Checked: one ``stop``; no call with a
recorded result ran twice; an uncertain call ran again only when its tool is idempotent; the
first request of a resume is byte-identical to the one the killed process had in flight; and
the requests of the whole run equal those of an uninterrupted run (the call ids, which the
server draws at random, renamed in order of appearance).

Skipped like the other ``llama-server`` tests without the binary or the model, unless
``REACTLOOP_REQUIRE_LLAMA_SERVER=1`` (then it fails).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

import resume_kill_child as child  # noqa: E402
from local_servers import chat_template, llama_server  # noqa: E402
from reactloop import read_journal  # noqa: E402
from reactloop.testing import FakeOpenAIServer, RecordedRequest, json_reply  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a minute a test unloaded

REQUIRED_BY = "REACTLOOP_REQUIRE_LLAMA_SERVER"
SEED = 7
MAX_STEPS = 4
TASK = "Call bump with n=1, then call bump with each result."
UNCERTAIN = "may already have run"
EXAMPLE = (  # one worked exchange, in the template's own turns
    "<|im_start|>user\\nCall bump with n=5, then call bump with each result.<|im_end|>\\n"
    '<|im_start|>assistant\\n<tool_call>\\n{"name": "bump", "arguments": {"n": 5}}\\n'
    "</tool_call><|im_end|>\\n"
    '<|im_start|>user\\nThe result was {"ok": true, "output": 6}. Make the next call of the'
    " task.<|im_end|>\\n"
    '<|im_start|>assistant\\n<tool_call>\\n{"name": "bump", "arguments": {"n": 6}}\\n'
    "</tool_call><|im_end|>\\n"
)
CHAT_TEMPLATE = chat_template(EXAMPLE)


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("llama-server")
    template = folder / "tools.jinja"
    template.write_text(CHAT_TEMPLATE, encoding="utf-8")
    options = [
        "--chat-template-file", str(template), "--ctx", "4096", "--threads", "1",
        "--parallel", "1", "--no-cache-prompt", "--seed", str(SEED),
    ]  # fmt: skip
    with llama_server(folder, required_by=REQUIRED_BY, options=options) as url:
        yield url


@dataclass
class Proxy:
    """Forwards each request to the server, keeps its bytes by process, and SIGKILLs the
    process whose ``kill_at``-th request this is, before the server sees it."""

    target: str
    pid: int = 0
    kill_at: int = 0
    sent: list[list[bytes]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: RecordedRequest) -> Any:
        with self.lock:
            self.sent[-1].append(request.body)
            if len(self.sent[-1]) == self.kill_at:
                os.kill(self.pid, signal.SIGKILL)
                return json_reply({"error": {"message": "killed"}}, status=500)
        reply = httpx.post(
            self.target + request.path,
            content=request.body,
            headers={"content-type": "application/json"},
            timeout=600,
        )
        return json_reply(reply.content, status=reply.status_code)


def cli(mode: str, tmp: Path, spec: str, proxy: Proxy, url: str) -> int:
    """``reactloop run`` or ``reactloop resume`` in a process of its own, killed per ``spec``."""
    trace = str(tmp / "run.jsonl")
    options = ["--base-url", url, "--json", "--fsync"]
    if mode == "run":
        options += [
            "--model", "openai:smollm2", "--tools", "counting", "--trace", trace,
            "--tool-choice", "required", "--temperature", "0", "--seed", str(SEED),
            "--max-steps", str(MAX_STEPS), "--max-output-tokens", "48", "--no-budget-notices",
        ]  # fmt: skip
    kind, _, rest = spec.partition(":")
    command = [
        sys.executable,
        __file__,
        str(tmp / "counter.txt"),
        spec if kind != "wire" else "none",
    ]
    command += [mode, *([TASK] if mode == "run" else [trace]), *options]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    with proxy.lock:
        process = subprocess.Popen(
            command, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        proxy.pid, proxy.kill_at = process.pid, int(rest) if kind == "wire" else 0
        proxy.sent.append([])
    _, err = process.communicate(timeout=1800)
    assert process.returncode in (0, 1, 3, -9), err.decode(errors="replace")
    return process.returncode


def kill_spec(rng: random.Random) -> str:
    kind = rng.choice(["wire", "tool", "event", "write"])
    if kind == "wire":
        return f"wire:{rng.randint(1, 3)}"
    if kind == "tool":
        return f"tool:{rng.randint(1, 2)}:{rng.choice(['before', 'after'])}"
    return f"{kind}:{rng.randint(3, 14)}"


def _kill_after_lines(killer: Any) -> None:
    """``event:K``: SIGKILL right after the K-th whole line of this process's journal."""
    if killer.kind == "event":
        child.watch_journal_lines(after=lambda: killer(None))


def kill_and_resume(tmp: Path, seed: int, proxy: Proxy, url: str) -> list[str]:
    """Run, then resume until the run stops, killing each process at a seeded moment (the
    first three: each lands, or the run ended first); the kills that landed."""
    rng = random.Random(seed)
    mode, landed = "run", list[str]()
    for attempt in range(12):
        spec = kill_spec(rng) if attempt < 3 else "none"
        if cli(mode, tmp, spec, proxy, url) != -9:
            return landed
        landed.append(spec)
        assert any(e["type"] == "run_start" for e in read_journal(tmp / "run.jsonl"))
        mode = "resume"
    raise AssertionError("the run never finished")


def effective(sent: list[list[bytes]]) -> list[bytes]:
    """The requests of the run: a process's first request is dropped when it repeats the
    one its killed predecessor had in flight (or whose reply it had not journaled whole)."""
    run: list[bytes] = []
    for bodies in sent:
        for i, body in enumerate(bodies):
            if i == 0 and run and run[-1] == body:
                continue
            run.append(body)
    return run


def renamed(bodies: list[bytes]) -> list[Any]:
    """The decoded requests, the call ids the server drew renamed in order of appearance."""
    names: dict[str, str] = {}

    def rename(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: names.setdefault(v, f"call-{len(names)}")
                if k in ("id", "tool_call_id") and isinstance(v, str)
                else rename(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    return [rename(json.loads(body)) for body in bodies]


@pytest.fixture(scope="module")
def reference(llama_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, ...]:
    """The uninterrupted run: its requests and its journal's events."""
    tmp = tmp_path_factory.mktemp("reference")
    proxy = Proxy(llama_url)
    with FakeOpenAIServer(responder=proxy) as server:
        assert cli("run", tmp, "none", proxy, server.base_url) != -9
    events = read_journal(tmp / "run.jsonl")
    assert sum(e["type"] == "tool_result" for e in events) >= 1, "the model made no call"
    return proxy.sent[0], events


def check_journal(tmp: Path, landed: list[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = read_journal(tmp / "run.jsonl")
    types = [e["type"] for e in events]
    assert types.count("stop") == 1 and types[-1] == "stop" and types.count("run_start") == 1
    executed = Counter(
        e["result"]["call_id"]
        for e in events
        if e["type"] == "tool_result" and e["result"]["executed"]
    )
    assert all(count == 1 for count in executed.values())  # no call with a result ran again
    after = sum(s.startswith("tool:") and s.endswith(":after") for s in landed)
    counter = tmp / "counter.txt"
    runs = counter.read_text().splitlines() if counter.exists() else []
    assert len(runs) == sum(executed.values()) + after  # plus each side effect a kill cut off
    uncertain = {
        c["call_id"]: c["name"]
        for e in events
        if e["type"] == "resume"
        for c in e["calls"]
        if c["state"] == "uncertain"
    }
    told = {
        e["result"]["call_id"]
        for e in events
        if e["type"] == "tool_result" and UNCERTAIN in json.dumps(e["result"])
    }
    assert told == {i for i, name in uncertain.items() if name == "bump"}  # never re-run
    assert not told & set(executed)
    return events


# seed 7: killed after a journal line, halfway through one, with a request in flight (no call
# left uncertain: the whole run is the uninterrupted one); seed 2: two requests in flight, then
# inside the tool after its side effect (the model is told the call may have run)
@pytest.mark.parametrize("seed", [7, 2])
def test_a_killed_run_against_llama_server_resumes_to_the_uninterrupted_requests(
    llama_url: str, reference: tuple[Any, ...], tmp_path: Path, seed: int
) -> None:
    reference_sent, reference_events = reference
    proxy = Proxy(llama_url)
    with FakeOpenAIServer(responder=proxy) as server:
        landed = kill_and_resume(tmp_path, seed, proxy, server.base_url)
    assert landed, "no kill landed"
    events = check_journal(tmp_path, landed)
    for i, spec in enumerate(landed):  # the request in flight at the kill, sent again as it was
        if spec.startswith("wire:"):
            assert proxy.sent[i + 1][0] == proxy.sent[i][-1]
    sent = effective(proxy.sent)
    cut = next((i for i, body in enumerate(sent) if UNCERTAIN.encode() in body), len(sent))
    assert renamed(sent[:cut]) == renamed(reference_sent[:cut])
    if cut == len(sent):  # nothing was left to the model: the same run, to the same stop
        assert len(sent) == len(reference_sent)
        assert events[-1]["stop_reason"] == reference_events[-1]["stop_reason"]


def counting(context: Any) -> list[Any]:
    """The ``counting`` tool family of the child: ``bump`` (a side effect) and ``put``
    (idempotent), from ``resume_kill_child.py``."""
    return list(child.tools(Path(_CHILD["counter"]), _CHILD["killer"]))


_CHILD: dict[str, Any] = {}


def child_main(argv: list[str]) -> None:
    """``python test_resume_llama_server.py COUNTER KILL reactloop-arguments…``."""
    from reactloop.cli import main
    from reactloop.tools.registry import FAMILIES

    counter, spec, *arguments = argv
    killer = child.Killer(spec)
    killer.patch_writes()
    _kill_after_lines(killer)
    _CHILD.update(counter=counter, killer=killer)
    FAMILIES["counting"] = "__main__:counting"
    main(arguments, prog_name="reactloop")


if __name__ == "__main__":
    child_main(sys.argv[1:])
