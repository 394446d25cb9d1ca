"""The local model runs in a child process: its crashes and overruns are model errors.

Real llama.cpp, real signals. Slow (a model load per test); they run in CI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, read_journal
from reactloop.messages import Message
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import ModelRequest
from reactloop.models.local import LocalLlamaModel
from reactloop.models.local.cpu import AMX_FLAGS, extra_buffer_types_allowed
from reactloop.models.local.process import GRACE_SECONDS
from reactloop.tools.families.calculator import tools as calculator_tools

if os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1":  # in CI a missing extra must fail
    pytest.importorskip("xllamacpp")
pytestmark = pytest.mark.slow

TASK = "What is 35 * 12? Use the calculator."
ENGINES = ("xllamacpp",)
CRASH_HOOK = Path(__file__).parent / "crash"


def _model(max_output_tokens: int = 160, **extra: Any) -> LocalLlamaModel:
    # A fresh n_ctx per test gives each its own model process (they are shared by options).
    settings = ModelSettings(max_output_tokens=max_output_tokens, extra=extra)
    model = resolve_model("local:smollm2-135m", settings)
    assert isinstance(model, LocalLlamaModel)
    return model


def _journal_events(path: Path) -> list[str]:
    return [str(record["type"]) for record in read_journal(path)]


def test_a_model_process_killed_mid_generation_ends_the_run_with_model_error(
    tmp_path: Path,
) -> None:
    model = _model(n_ctx=2048)
    pid = model.process.pid
    assert pid is not None
    killed: list[int] = []

    def kill_on_first_text(_: str) -> None:
        if not killed:
            killed.append(pid)
            os.kill(pid, signal.SIGSEGV)

    trace = tmp_path / "run.jsonl"
    journal = Journal(trace)
    agent = Agent(
        model,
        calculator_tools(),
        limits=Limits(max_model_calls=4),
        journal=journal,
        on_text=kill_on_first_text,
        tool_choice="required",
    )
    result = agent.run(TASK)
    journal.close()
    assert killed
    assert str(result.stop_reason) == "model_error"
    assert "died with signal 11 (SIGSEGV)" in (result.error or "")
    events = _journal_events(trace)
    assert events[-1] == "stop" and events.count("stop") == 1
    # The next run starts a fresh process and works again.
    again = Agent(model, calculator_tools(), limits=Limits(max_model_calls=2)).run(TASK)
    assert str(again.stop_reason) != "model_error", again.error
    assert model.process.pid not in (None, pid)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_time_limit_ends_a_generation_that_would_run_past_it(engine: str) -> None:
    # A stopped process cannot stop by itself at the deadline, as a kernel stuck in native
    # code cannot: the parent must end it, and the run ends with timeout.
    model = _model(n_ctx=2304, grammar=False, engine=engine)
    pid = model.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    limit = 1.0
    started = time.monotonic()
    result = Agent(
        model, calculator_tools(), limits=Limits(max_seconds=limit, max_model_calls=2)
    ).run("Write a very long story about a calculator.")
    elapsed = time.monotonic() - started
    assert str(result.stop_reason) == "timeout", result.error
    assert limit <= elapsed < limit + GRACE_SECONDS + 3.0
    with pytest.raises(ProcessLookupError):  # the frozen process was killed and reaped
        os.kill(pid, 0)


def _long_task(facts: int) -> str:
    """A task of about 18 tokens a fact."""
    text = " ".join(
        f"Fact {n}: the calculator number {n} weighs {n * 7} grams." for n in range(facts)
    )
    return f"{text}\nWrite a very long story about these calculators."


@pytest.mark.parametrize("engine", ENGINES)
def test_a_deadline_already_past_is_kept_before_the_prompt_is_read(engine: str) -> None:
    # Independent of the machine's speed and load: the worker checks the deadline before each
    # chunk of the prompt, so with no time left it reads none of it and generates nothing
    # (checked only after the first generated token, it read the whole prompt first).
    model = _model(max_output_tokens=8, n_ctx=2560, grammar=False, engine=engine)
    pid = model.process.pid
    task = _long_task(facts=12)
    request = ModelRequest(messages=[Message(role="user", content=task)], timeout=0.0)
    turn = model.complete(request)
    assert turn.raw["deadline_hit"] is True
    assert turn.raw["generated_tokens"] == 0
    assert turn.raw["prompt_read_tokens"] == 0 < turn.raw["prompt_tokens"]
    assert model.process.pid == pid  # it answered by itself: not killed
    # The model goes on from there: with time, the same prompt is read and answered.
    again = model.complete(ModelRequest(messages=request.messages, timeout=None))
    assert again.raw["deadline_hit"] is False and again.raw["generated_tokens"] > 0
    assert model.process.pid == pid


@pytest.mark.parametrize("engine", ENGINES)
def test_the_worker_stops_a_long_generation_at_the_deadline_by_itself(engine: str) -> None:
    # A time limit far shorter than reading the prompt (let alone the story) takes, on a busy
    # machine too: the worker stops mid-prompt, within the parent's grace, and is not killed.
    model = _model(n_ctx=3328, grammar=False, engine=engine)
    pid = model.process.pid
    limit = 0.5
    started = time.monotonic()
    result = Agent(
        model,
        calculator_tools(),
        limits=Limits(max_seconds=limit, max_model_calls=1),
    ).run(_long_task(facts=120))  # ~2,200 tokens: a second or more to read on any CPU
    elapsed = time.monotonic() - started
    assert str(result.stop_reason) == "timeout", result.error
    assert result.model_calls == 1
    assert model.process.pid == pid  # ended by its own deadline, not killed
    assert elapsed < limit + GRACE_SECONDS


def test_the_cli_exits_1_with_a_complete_journal_when_the_model_process_crashes(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "run.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(CRASH_HOOK), os.environ.get("PYTHONPATH", "")]),
        "REACTLOOP_TEST_CRASH_AT_STEP": "2",
    }
    completed = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", TASK, "--model", "local", "--json",
         "--trace", str(trace), "--tool-choice", "required", "--max-steps", "4"],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stderr
    report = json.loads(completed.stdout)
    assert report["stop_reason"] == "model_error"
    assert "signal 11 (SIGSEGV)" in report["error"]
    events = _journal_events(trace)
    assert events[-1] == "stop" and events.count("stop") == 1
    assert "tool_result" in events  # step 1 ran and was kept


def test_extra_buffer_types_are_off_on_amx_cpus_and_the_cure_path_answers() -> None:
    assert extra_buffer_types_allowed("auto", AMX_FLAGS) is False
    assert extra_buffer_types_allowed("auto", frozenset({"avx2", "avx512f"})) is True
    assert extra_buffer_types_allowed("auto", frozenset({"avx2"}), built_with_amx=True) is False
    model = _model(n_ctx=2816, extra_buffer_types="off")
    assert model.info["use_extra_bufts"] is False
    probe = model.process.probe("The capital of France is", 4)
    assert "Paris" in probe["text"]


def test_an_amx_build_is_never_loaded_with_its_amx_kernels() -> None:
    """On a CPU with AMX llama.cpp compiles its AMX kernel in (system info says AMX_INT8 = 1);
    wherever it is in, the default load must keep it off. On other CPUs this checks that the
    default keeps the faster repacked layouts."""
    model = _model(n_ctx=3072)
    built_with_amx = "AMX_INT8 = 1" in model.info["system_info"]
    assert model.info["use_extra_bufts"] is not built_with_amx


def test_the_model_process_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    code = (
        "import os, sys; from reactloop.models import ModelSettings, resolve_model; "
        "m = resolve_model('local:smollm2-135m', ModelSettings(extra={'n_ctx': 1024})); "
        "print(m.process.pid, flush=True); sys.stdin.read()"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    parent.kill()  # no atexit, no socket closed by Python: only the watchdog can end it
    parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        stat = Path(f"/proc/{worker}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return  # exited; waiting for init to reap it
        time.sleep(0.1)
    os.kill(worker, signal.SIGKILL)
    pytest.fail("the model process outlived its parent")
