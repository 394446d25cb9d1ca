"""A real Open Responses server no one here wrote: llama.cpp's C++ ``llama-server``, which serves
``/v1/responses`` beside ``/v1/chat/completions``, with SmolLM2-135M-Instruct (as
``reactloop pull`` fetched it), started on a free loopback port for this module.

The server (compiled into the xllamacpp wheel) and the skip / ``REACTLOOP_REQUIRE_LLAMA_SERVER=1``
rules are those of the other llama-server tests (``tests/local_servers.py``).
The tiny model rarely writes a call, so the comparison of the two endpoints scripts the first
turn's call and lets the real server read the ``function_call`` / ``function_call_output``
history (or the ``tool_calls`` / ``tool`` messages) and answer; an unscripted run with the
calculator must end with a valid stop either way, streamed and not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from local_servers import llama_server
from reactloop import Agent, Journal, Limits, Model, ModelRequest, ModelTurn, ToolCall
from reactloop.cli import main
from reactloop.messages import Message
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.tools.families.calculator import calculator_tool

pytestmark = pytest.mark.slow

REQUIRED_BY = "REACTLOOP_REQUIRE_LLAMA_SERVER"
HELLO = [Message(role="user", content="Say hello.", kind="task")]
TASK = "What is 17 * 23? Use the calculator."
STOPS = ("final_answer", "truncated", "max_model_calls", "loop_detected", "format_errors")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("llama-server")
    with llama_server(folder, required_by=REQUIRED_BY) as url:
        yield url


def responses_model(url: str, *, stream: bool = False, max_tokens: int = 48) -> Model:
    return OpenAIResponsesModel(
        model="smollm2", base_url=f"{url}/v1", stream=stream, temperature=0.0,
        max_output_tokens=max_tokens, max_retries=0, timeout=120,
    )  # fmt: skip


def chat_model(url: str, *, stream: bool = False, max_tokens: int = 48) -> Model:
    return OpenAIChatModel(
        model="smollm2", provider="llamacpp", base_url=f"{url}/v1", stream=stream,
        temperature=0.0, max_output_tokens=max_tokens, max_retries=0, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_responses_endpoint_answers(server_url: str, stream: bool) -> None:
    shown: list[str] = []
    request = ModelRequest(messages=HELLO, on_text=shown.append)
    turn = responses_model(server_url, stream=stream).complete(request)
    assert turn.text.strip() and turn.finish_reason in ("stop", "length")
    assert "".join(shown) == turn.text
    assert turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0
    assert any(item["type"] == "message" for item in turn.raw_message["output"])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_calculator_run_ends_with_a_valid_stop(
    server_url: str, stream: bool, tmp_path: Path
) -> None:
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(
            responses_model(server_url, stream=stream),
            [calculator_tool()],
            limits=Limits(max_model_calls=3, max_seconds=300),
            journal=journal,
        )
        result = agent.run(TASK)
    assert result.stop_reason.value in STOPS, result.error
    assert json.loads(trace.read_text().splitlines()[-1])["type"] == "stop"


class FirstCallScripted:
    """The first turn calls the calculator; every later turn is the real server's."""

    native_tools = True

    def __init__(self, real: Model) -> None:
        self.real = real
        self.name = real.name
        self.calls = 0

    def complete(self, request: ModelRequest) -> ModelTurn:
        self.calls += 1
        if self.calls > 1:
            return self.real.complete(request)
        call = ToolCall(id="call_01", name="calculator", arguments='{"expression": "17*23"}')
        return ModelTurn(tool_calls=(call,), finish_reason="tool_calls")


def scripted_run(model: Model) -> tuple[Any, list[Any]]:
    requests: list[Any] = []
    agent = Agent(
        FirstCallScripted(model),
        [calculator_tool()],
        limits=Limits(max_model_calls=2, max_seconds=300),
        observers=[lambda e: requests.append(e.data["request"]) if e.type == "response" else None],
    )
    return agent.run(TASK), requests


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_chat_and_responses_of_one_server_give_comparable_traces(
    server_url: str, stream: bool
) -> None:
    chat, chat_requests = scripted_run(chat_model(server_url, stream=stream))
    responses, responses_requests = scripted_run(responses_model(server_url, stream=stream))
    for result in (chat, responses):
        assert result.tool_calls == 1 and result.model_calls == 2
        assert result.stop_reason.value in STOPS, result.error
    items = responses_requests[0]["input"]
    assert [i.get("type", i.get("role")) for i in items] == [
        "user", "function_call", "function_call_output", "user",  # the last: answer now
    ]  # fmt: skip
    assert items[1]["call_id"] == items[2]["call_id"] == "call_01"
    assert "391" in items[2]["output"]
    messages = chat_requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[3]["content"] == items[2]["output"]
    assert messages[4]["content"] == items[3]["content"]
    # one chat template renders both: the same prompt, at temperature 0 the same reply
    assert chat.usage.input_tokens == responses.usage.input_tokens > 0
    assert (chat.stop_reason, chat.answer) == (responses.stop_reason, responses.answer)


@pytest.mark.parametrize("spec", [["--model", "responses:any"], ["--model", "llamacpp", "--api",
                                  "responses"]], ids=["responses", "api"])  # fmt: skip
def test_reactloop_run_speaks_responses_to_the_server(
    server_url: str, spec: list[str], tmp_path: Path
) -> None:
    args = ["run", TASK, *spec, "--base-url", f"{server_url}/v1", "--max-steps", "2",
            "--max-output-tokens", "48", "--temperature", "0", "--json",
            "--trace", str(tmp_path / "run.jsonl")]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1, 3), result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stop_reason"] in STOPS and outcome["usage"]["input_tokens"] > 0
