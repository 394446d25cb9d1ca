"""A real Anthropic-compatible server no one here wrote: llama.cpp's C++ ``llama-server``, which
serves ``/v1/messages`` beside ``/v1/chat/completions``, with SmolLM2-135M-Instruct (as
``reactloop pull`` fetched it), started on a free loopback port for this module.

The server is the one compiled into the xllamacpp wheel (``tests/llama_server_main.py``);
without it the module is skipped, unless ``REACTLOOP_REQUIRE_LLAMA_SERVER=1`` (then it fails).
It runs with the extra buffer types off (``--no-repack``): on CPUs with AMX the repacked kernels
crash. The tiny model does not write ``tool_use`` blocks
even with ``tool_choice`` ``any``, so the full run scripts the first turn's call and lets the
real server read the ``tool_use`` / ``tool_result`` history and answer. The same run goes
through the server's OpenAI endpoint with the OpenAI adapter. Starting and stopping the server:
``tests/local_servers.py``, shared with ``tests/test_llamacpp_server.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local_servers import llama_server
from reactloop import Agent, Limits, Model, ModelRequest, ModelTurn, ToolCall, tool
from reactloop.messages import Message
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel

pytestmark = pytest.mark.slow

REQUIRED_BY = "REACTLOOP_REQUIRE_LLAMA_SERVER"
HELLO = ModelRequest(messages=[Message(role="user", content="Say hello.", kind="task")])


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("llama-server")
    with llama_server(folder, required_by=REQUIRED_BY) as url:
        yield url


def model_for(url: str, *, stream: bool = False, max_tokens: int = 48) -> AnthropicModel:
    return AnthropicModel(
        model="smollm2",
        base_url=url,
        stream=stream,
        temperature=0.0,
        max_output_tokens=max_tokens,
        max_retries=0,
        timeout=120,
    )


def openai_model_for(url: str, *, stream: bool = False, max_tokens: int = 48) -> OpenAIChatModel:
    return OpenAIChatModel(
        model="smollm2",
        provider="llamacpp",
        base_url=f"{url}/v1",
        stream=stream,
        temperature=0.0,
        max_output_tokens=max_tokens,
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
    """The first turn calls ``multiply`` (as Claude would); every later turn is the server's.

    ``raw_message`` is the first turn's assistant message as its protocol's wire has it."""

    native_tools = True

    def __init__(self, real: Model, raw_message: Any) -> None:
        self.real = real
        self.name = real.name
        self.raw_message = raw_message
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelTurn:
        self.calls += 1
        if self.calls > 1:
            return self.real.complete(request)
        return ModelTurn(
            tool_calls=(ToolCall(id="toolu_01", name="multiply", arguments='{"a": 17, "b": 23}'),),
            finish_reason="tool_calls",
            raw_message=self.raw_message,
        )


TOOL_USE = {"type": "tool_use", "id": "toolu_01", "name": "multiply", "input": {"a": 17, "b": 23}}


def run_after_a_call(model: FirstCallScripted) -> tuple[Any, list[Any]]:
    """A full run whose first call is scripted; the requests the server got, as journaled."""
    requests: list[Any] = []
    agent = Agent(
        model,
        [multiply],
        limits=Limits(max_model_calls=3, max_seconds=300),
        observers=[lambda e: requests.append(e.data["request"]) if e.type == "response" else None],
    )
    return agent.run("What is 17 * 23? Use the multiply tool."), requests


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_tool_use_and_tool_result_history_is_accepted_and_answered(
    server_url: str, stream: bool
) -> None:
    raw = {"role": "assistant", "content": [TOOL_USE]}
    result, requests = run_after_a_call(
        FirstCallScripted(model_for(server_url, stream=stream), raw)
    )
    assert result.tool_calls == 1 and result.model_calls >= 2
    assert result.stop_reason in ("final_answer", "truncated", "max_model_calls"), result.error
    sent = requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [TOOL_USE]
    assert sent[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": sent[2]["content"][0]["content"],
    }
    assert "391" in sent[2]["content"][0]["content"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_openai_endpoint_of_the_same_server_takes_the_same_run(
    server_url: str, stream: bool
) -> None:
    call = {
        "id": "toolu_01",
        "type": "function",
        "function": {"name": "multiply", "arguments": '{"a": 17, "b": 23}'},
    }
    raw = {"role": "assistant", "content": None, "tool_calls": [call]}
    model = FirstCallScripted(openai_model_for(server_url, stream=stream), raw)
    result, requests = run_after_a_call(model)
    assert result.tool_calls == 1 and result.model_calls >= 2
    assert result.stop_reason in ("final_answer", "truncated", "max_model_calls"), result.error
    sent = requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "toolu_01"
    assert sent[3]["tool_call_id"] == "toolu_01" and "391" in sent[3]["content"]


def test_both_endpoints_count_the_same_prompt_alike(server_url: str) -> None:
    """``/v1/messages`` leaves the tokens it reused out of ``input_tokens`` (as Anthropic's API
    leaves cache reads out); ``/v1/chat/completions`` counts them in ``prompt_tokens``. Our
    ``Usage`` counts the whole prompt for both."""
    anthropic = model_for(server_url, max_tokens=4)
    first, again = anthropic.complete(HELLO), anthropic.complete(HELLO)
    assert again.usage.cached_tokens > 0  # its own KV cache, without any cache_control
    wire = again.raw["usage"]
    assert wire["input_tokens"] + wire["cache_read_input_tokens"] == again.usage.input_tokens
    assert again.usage.input_tokens == first.usage.input_tokens
    openai = openai_model_for(server_url, max_tokens=4).complete(HELLO)
    assert openai.usage.input_tokens == again.usage.input_tokens
