"""A real OpenAI-compatible server no one here wrote: llama.cpp's ``llama-server`` (prebuilt,
from the xllamacpp wheel) serving SmolLM2-135M-Instruct with a Hermes-style chat template that
has tools (rendered by llama.cpp's Jinja engine), started on a free loopback port for this
module and stopped after.

Observed behaviour of that server with the 135M model: it answers in text under ``auto`` and
``required`` alike (the tiny model writes no ``<tool_call>``, and this build does not force one),
and a named ``tool_choice`` (the object form) is ignored with a warning in its log and read as
``auto``. Each must end the run with a clear stop reason; calls through this server's history
are covered by the Anthropic and Responses llama-server tests, which script the first call.

Skipped without xllamacpp or the model, unless ``REACTLOOP_REQUIRE_SLOW=1`` (CI sets it, so a
broken install fails instead of skipping). Starting and stopping the server:
``tests/local_servers.py``, shared with the other llama-server tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from local_servers import llama_server
from reactloop import Agent, Event, Limits, RunResult, StopReason
from reactloop.models.openai import OpenAIChatModel
from reactloop.tools.families.calculator import calculator_tool

pytestmark = pytest.mark.slow

TASK = "What is 17 * 23? Use the calculator tool."
REQUIRED_BY = "REACTLOOP_REQUIRE_SLOW"


# SmolLM2's own template has no tools; llama-server reads this Hermes-style one (tools in
# <tools>, calls in <tool_call> tags) as a template that can call them.
TOOLS_TEMPLATE = (
    "{%- if tools %}{{- '<|im_start|>system\\nYou are provided with function signatures within"
    " <tools></tools> XML tags:\\n<tools>' }}{%- for tool in tools %}{{- '\\n' }}"
    "{{- tool | tojson }}{%- endfor %}{{- '\\n</tools>\\n\\nFor each function call, return a"
    " json object with function name and arguments within <tool_call></tool_call> XML tags:"
    '\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n'
    "</tool_call><|im_end|>\\n' }}{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' and message.tool_calls %}"
    "{{- '<|im_start|>assistant' }}{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    '{{- \'\\n<tool_call>\\n{"name": "\' + tool_call.name + \'", "arguments": \' }}'
    "{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response>"
    "<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("llamacpp")
    template = folder / "tools.jinja"
    template.write_text(TOOLS_TEMPLATE, encoding="utf-8")
    options = ["--chat-template-file", str(template)]
    with llama_server(folder, required_by=REQUIRED_BY, options=options) as url:
        yield f"{url}/v1"


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


CLEAR_STOPS = {
    StopReason.FINAL_ANSWER, StopReason.MAX_MODEL_CALLS, StopReason.FORMAT_ERRORS,
    StopReason.LOOP_DETECTED, StopReason.TRUNCATED, StopReason.MAX_TOOL_CALLS,
}  # fmt: skip


@pytest.mark.parametrize(
    ("tool_choice", "stream"), [("auto", False), ("required", True), ("calculator", False)]
)
def test_each_tool_choice_ends_with_a_clear_stop_reason(
    server_url: str, tool_choice: str, stream: bool
) -> None:
    result, responses = run_agent(server_url, tool_choice, stream=stream)
    assert responses, "the server answered at least once"
    assert result.stop_reason in CLEAR_STOPS, result.error
    assert result.model_calls == len(responses)
