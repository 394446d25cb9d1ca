"""Runs through the CLI whose journals hold Anthropic's thinking, redacted thinking and cache
usage (and an OpenAI-compatible run with cached tokens): the viewer's and ``reactloop cost``'s
tests read them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from anthropic_cached_usage import FIRST, SECOND
from reactloop.cli import main
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    completion,
    message,
    thinking,
    tool_call,
    tool_use,
)

MODEL = "anthropic:claude-sonnet-4-6"
THOUGHT = "I should add 2 and 3 with the calculator."
RED_1 = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}  # 28 bytes
RED_2 = {"type": "redacted_thinking", "data": base64.b64encode(bytes(range(60))).decode()}
RED_3 = {"type": "redacted_thinking", "data": base64.b64encode(b"<script>x</script>").decode()}


MODEL = "anthropic:claude-sonnet-4-6"


THOUGHT = "I should add 2 and 3 with the calculator."


RED_1 = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}  # 28 bytes


RED_2 = {"type": "redacted_thinking", "data": base64.b64encode(bytes(range(60))).decode()}


RED_3 = {"type": "redacted_thinking", "data": base64.b64encode(b"<script>x</script>").decode()}


def redacted_script() -> list[Any]:
    """Step 1: thinking, redacted thinking, a call; step 2: two redacted blocks, the answer."""
    return [
        message(
            content=[
                thinking(THOUGHT, "sig-1"),
                RED_1,
                tool_use("calculator", {"expression": "2+3"}),
            ],
            usage=FIRST,
        ),
        message(content=[RED_2, RED_3], text="5", usage=SECOND),
    ]


def anthropic_run(
    tmp_path: Path, *flags: str, script: list[Any] | None = None
) -> tuple[Path, str, FakeAnthropicServer]:
    """A CLI run with thinking and caching on; the trace, the console's output, the server."""
    trace = tmp_path / "run.jsonl"
    with FakeAnthropicServer(redacted_script() if script is None else script) as server:
        result = CliRunner().invoke(
            main,
            ["run", "2+3?", "--model", MODEL, "--base-url", server.base_url, "--thinking", "2048",
             "--cache", "--trace", str(trace), *flags],
        )  # fmt: skip
    assert result.exit_code == 0 and result.stdout.strip() == "5", result.stderr
    return trace, result.stderr, server


def openai_cached_run(tmp_path: Path) -> Path:
    """The journal of an OpenAI-compatible CLI run: cached tokens, no cache writes."""
    trace = tmp_path / "openai.jsonl"
    usage = {
        "prompt_tokens": 40,
        "completion_tokens": 6,
        "prompt_tokens_details": {"cached_tokens": 32},
    }
    script = [
        completion(tool_calls=[tool_call("calculator", {"expression": "2+3"})], usage=usage),
        completion("5", usage=usage),
    ]
    with FakeOpenAIServer(script) as server:
        result = CliRunner().invoke(
            main, ["run", "2+3?", "--model", "vllm:fake", "--base-url", server.base_url,
                   "--tools", "calculator", "--trace", str(trace)],
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return trace
