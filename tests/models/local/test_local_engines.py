"""The local models' engine, llama.cpp prebuilt (xllamacpp): where it runs, and its process.

Whether it can run is pure (CPU flags, what is installed, what was asked for); the rest loads
it for real (CI requires it).
"""

from __future__ import annotations

import importlib.util
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop.errors import MissingDependency, UsageError
from reactloop.messages import Message
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import ModelRequest
from reactloop.models.local import LocalLlamaModel, engines
from reactloop.models.react import ReactTextModel
from reactloop.tools.families.calculator import tools as calculator_tools

QUESTION = "What is 35 * 12?"
INTEL_FLAGS = "fpu sse2 avx avx2 fma f16c bmi2 avx512f amx_tile amx_int8 amx_bf16"


def _cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    return path


def test_the_prebuilt_engine_runs_on_x86_with_avx2_and_on_other_machines(tmp_path: Path) -> None:
    assert engines.prebuilt_runs_here(_cpuinfo(tmp_path, INTEL_FLAGS), machine="x86_64")
    assert engines.prebuilt_runs_here(_cpuinfo(tmp_path, "fpu sse2 avx"), machine="x86_64") is False
    assert engines.prebuilt_runs_here(tmp_path / "missing", machine="x86_64") is None
    assert engines.prebuilt_runs_here(tmp_path / "missing", machine="aarch64") is True


def test_an_unknown_engine_is_a_usage_error_that_names_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REACTLOOP_LOCAL_ENGINE", "llamafile")
    with pytest.raises(UsageError, match="auto, xllamacpp"):
        engines.requested_engine()
    assert engines.requested_engine(" XllamaCPP ") == "xllamacpp"
    monkeypatch.setenv("REACTLOOP_LOCAL_ENGINE", "")
    assert engines.requested_engine() == "auto"
    with pytest.raises(UsageError, match=r"removed .* --model llamacpp:NAME"):
        engines.requested_engine("llama-cpp-python")


@pytest.mark.parametrize("runs", [True, None])
def test_the_prebuilt_engine_is_chosen_unless_the_cpu_cannot_run_it(
    monkeypatch: pytest.MonkeyPatch, runs: bool | None
) -> None:
    monkeypatch.setattr(engines, "installed", lambda: True)
    monkeypatch.setattr(engines, "prebuilt_runs_here", lambda: runs)
    assert engines.choose_engine("auto") == "xllamacpp"


def test_without_a_usable_engine_the_error_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engines, "installed", lambda: True)
    monkeypatch.setattr(engines, "prebuilt_runs_here", lambda: False)
    with pytest.raises(MissingDependency, match="llama-server built for this CPU"):
        engines.choose_engine("auto")
    monkeypatch.setattr(engines, "installed", lambda: False)
    with pytest.raises(MissingDependency, match=r"reactloop\[local\]"):
        engines.choose_engine("auto")


needs_engine = pytest.mark.skipif(
    os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1"
    and importlib.util.find_spec("xllamacpp") is None,
    reason="needs the local extra (CI installs it)",
)


def _model(engine: str, **extra: Any) -> LocalLlamaModel:
    settings = ModelSettings(max_output_tokens=96, extra={"engine": engine, **extra})
    model = resolve_model("local:smollm2-135m", settings)
    assert isinstance(model, LocalLlamaModel)
    return model


def _first_step(model: LocalLlamaModel, protocol: str) -> tuple[str, dict[str, Any]]:
    specs = tuple(tool.spec for tool in calculator_tools())
    adapter = model if protocol == "native" else ReactTextModel(model)
    history = (Message(role="user", content=QUESTION, kind="task"),)
    sent: list[dict[str, Any]] = []
    request = ModelRequest(messages=history, tools=specs, step=1, on_raw=sent.append)
    turn = adapter.complete(request)
    assert [raw["engine"] for raw in sent] == [model.info["engine"]]  # the journal names it
    return turn.text + repr(turn.tool_calls), turn.raw


@pytest.mark.slow
@needs_engine
def test_the_prebuilt_engine_ignores_ctrl_c_and_removes_its_socket_when_stopped() -> None:
    model = _model("xllamacpp", n_ctx=1024)  # its own process: no other test shares it
    assert model.info["engine"] == "xllamacpp"
    pid = model.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGINT)  # llama-server would stop on it; the parent owns Ctrl-C
    text, _ = _first_step(model, "native")
    assert text != "()"  # it answered or called a tool: the process lives on
    assert model.process.pid == pid
    folder = Path(model.info["socket_folder"])
    assert (folder / "llama.sock").is_socket()
    model.process.stop()  # as at exit, or past a time limit: the process is killed
    assert not folder.exists()


HARNESS = """
import sys
from reactloop.messages import Message
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.base import ModelRequest
settings = ModelSettings(max_output_tokens=400, extra={"n_ctx": 1536})  # streams its thought
model = resolve_model("local:smollm2-135m", settings)
print(model.info["socket_folder"], model.process.pid, flush=True)
task = Message(role="user", content="Write a long story about a cat.", kind="task")
model.complete(ModelRequest(messages=(task,), on_text=lambda text: print("generating", flush=True)))
"""


@pytest.mark.slow
@needs_engine
def test_a_harness_killed_mid_generation_leaves_no_socket_folder_behind() -> None:
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert harness.stdout is not None
        folder, pid = harness.stdout.readline().split()
        assert Path(folder, "llama.sock").is_socket()
        worker = os.pidfd_open(int(pid))
        assert harness.stdout.readline() == "generating\n"  # the model process is busy
        harness.kill()  # SIGKILL, mid-generation: no cleanup runs in the harness
        harness.wait(timeout=30)
        ready, _, _ = select.select([worker], [], [], 60)  # the worker's exit, not a clock
        assert ready, "the model process outlived its harness by a minute"
        os.close(worker)
        assert not Path(folder).exists()
    finally:
        harness.kill()
