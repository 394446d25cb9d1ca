"""A model that fails to load is a run that stops ``model_error``: ``--json`` prints its one
object, the journal has its ``run_start`` and its ``stop``, and the exit code is 1.

Two ways to fail: an adapter whose construction raises (any machine), and the embedded model's
process killed while it loads (needs the local extra and the embedded model; skipped without
them). A corrupt GGUF file for ``local:PATH.gguf`` is a usage error instead (exit 2)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import invoke
from reactloop import read_journal
from reactloop.cli import main
from reactloop.errors import ModelError
from reactloop.models import registry


def failing_to_load(provider: str, name: str, settings: Any) -> Any:
    raise ModelError("the model process died while loading (killed by signal 9)", kind="server")


def crashing_on_construction(provider: str, name: str, settings: Any) -> Any:
    raise RuntimeError("a bug in the adapter")


@pytest.fixture
def broken_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    providers = {
        **registry.PROVIDERS,
        "broken": f"{__name__}:failing_to_load",
        "buggy": f"{__name__}:crashing_on_construction",
    }
    monkeypatch.setattr(registry, "PROVIDERS", providers)  # the roster's own table is read-only


def assert_a_run_that_stopped_model_error(trace: Path, out: str, cause: str) -> None:
    report = json.loads(out)
    assert report["answer"] is None and report["stop_reason"] == "model_error"
    assert report["model_calls"] == 0 and report["trace"] == str(trace)
    assert cause in report["error"] and "could not be loaded" in report["error"]
    records = list(read_journal(trace))
    assert [r["type"] for r in records] == ["run_start", "stop"]
    assert records[0]["task"] == "What is 2+3?"
    assert records[-1]["stop_reason"] == "model_error" and cause in records[-1]["error"]


@pytest.mark.parametrize(
    ("spec", "cause", "kind"),
    [
        ("broken:m", "killed by signal 9", "server"),
        ("buggy:m", "RuntimeError: a bug in the adapter", "other"),
    ],
)
def test_a_model_that_fails_to_load_is_a_run_that_stops_model_error(
    tmp_path: Path, broken_providers: None, spec: str, cause: str, kind: str
) -> None:
    trace = tmp_path / "run.jsonl"
    code, out, err = invoke("run", "What is 2+3?", "--model", spec, "--json", "--trace", str(trace))
    assert code == 1
    assert_a_run_that_stopped_model_error(trace, out, cause)
    assert json.loads(out)["error_kind"] == kind
    assert f"reactloop: error: the model {spec} could not be loaded" in err
    code, out, err = invoke("run", "What is 2+3?", "--model", spec, "--no-trace")
    assert code == 1 and out == ""
    assert "No answer" in err and cause in err and "stop: model_error" in err


def test_chat_with_a_model_that_fails_to_load_does_not_begin(
    tmp_path: Path, broken_providers: None
) -> None:
    trace = tmp_path / "chat.jsonl"
    result = CliRunner().invoke(main, ["chat", "--model", "broken:m", "--trace", str(trace)])
    assert result.exit_code == 1
    assert "reactloop: error: the model broken:m could not be loaded" in result.stderr
    assert not trace.exists()


NO_LLAMA = importlib.util.find_spec("xllamacpp") is None


def worker_of(process: subprocess.Popen[str]) -> int:
    """The pid of the model process ``process`` starts, as soon as it exists (polled: no event
    says a child was born); it then still has to import llama.cpp and load the model."""
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    if not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists():
        process.kill()
        pytest.skip("the kernel does not list a process's children (CONFIG_PROC_CHILDREN)")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        for pid in children.read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"reactloop.models.local.worker" in cmdline:
                return int(pid)
        time.sleep(0.002)
    pytest.fail("the model process never started")


@pytest.mark.slow
@pytest.mark.skipif(NO_LLAMA, reason="needs the local extra and the embedded model")
def test_killing_the_model_process_while_it_loads_is_a_run_that_stops_model_error(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "run.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "reactloop", "run", "What is 2+3?", "--model", "local",
         "--json", "--trace", str(trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        os.kill(worker_of(process), signal.SIGKILL)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 1, err
    assert_a_run_that_stopped_model_error(trace, out, "loading")
    assert "reactloop: error: the model local could not be loaded" in err


@pytest.mark.skipif(NO_LLAMA, reason="needs the local extra")
def test_a_corrupt_gguf_file_is_a_usage_error_that_leaves_no_journal(tmp_path: Path) -> None:
    """A file llama.cpp refuses is bad input, like a notes file that is not JSON."""
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + b"\x00\xff" * 512)
    trace = tmp_path / "run.jsonl"
    code, out, err = invoke(
        "run", "What is 2+3?", "--model", f"local:{corrupt}", "--json", "--trace", str(trace)
    )
    assert code == 2 and out == ""
    assert err.startswith(f"reactloop: error: cannot load model file {corrupt}")
    assert not trace.exists()
