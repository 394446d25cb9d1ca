"""A resumed run's requests are byte for byte the ones the uninterrupted run sent: the rebuilt
history is what the model saw, provider parts included (reasoning content, Anthropic's
thinking blocks and their signatures, cache markers), for OpenAI chat, Anthropic and text
ReAct. Requests captured with the fake servers' ``RecordedRequest``; the journal is cut at
every event boundary, as a kill would cut it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest

from reactloop import Agent, Journal, Limits, tool
from reactloop.journal.writer import read_journal
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    completion,
    message,
    thinking,
    tool_call,
    tool_use,
)

LIMITS = Limits(max_model_calls=10, max_tool_calls=10, max_seconds=None)
TIGHT = Limits(max_model_calls=3, max_tool_calls=3, max_seconds=None)


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: first
        b: second
    """
    return a + b


def openai_script() -> list[Any]:
    return [
        completion(
            "I will add.",
            tool_calls=[tool_call("add", {"a": 1, "b": 2}, id="c1")],
            reasoning_content="first, 1+2",
        ),
        completion(
            tool_calls=[tool_call("add", {"a": 3, "b": 4}, id="c2")], reasoning_content="r2"
        ),
        completion("3 and 7"),
    ]


def anthropic_script() -> list[Any]:
    return [
        message(content=[thinking("add 1 and 2", "sig-1"), tool_use("add", {"a": 1, "b": 2})]),
        message(
            content=[
                thinking("now 3 and 4", "sig-2"),
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                tool_use("add", {"a": 3, "b": 4}),
            ]
        ),
        message(content=[thinking("done", "sig-3")], text="3 and 7"),
    ]


def react_script() -> list[Any]:
    return [
        completion('Thought: add.\nAction: add[{"a": 1, "b": 2}]'),
        completion('Thought: again.\nAction: add[{"a": 3, "b": 4}]'),
        completion("Thought: done.\nFinish[3 and 7]"),
    ]


Protocol = Literal["native", "text"]
Case = tuple[Callable[[list[Any]], Any], Callable[[Any], Any], Callable[[], list[Any]], Protocol]
CASES: dict[str, Case] = {
    "openai": (
        FakeOpenAIServer,
        lambda s: OpenAIChatModel(model="fake", base_url=s.base_url, max_retries=0),
        openai_script,
        "native",
    ),
    "anthropic": (
        FakeAnthropicServer,
        lambda s: AnthropicModel(
            model="fake-claude",
            base_url=s.base_url,
            max_retries=0,
            thinking_budget=2048,
            cache=True,
        ),
        anthropic_script,
        "native",
    ),
    "openai-wind-down": (  # the last call told to answer now, the budget notices due
        FakeOpenAIServer,
        lambda s: OpenAIChatModel(model="fake", base_url=s.base_url, max_retries=0),
        openai_script,
        "native",
    ),
    "react": (
        FakeOpenAIServer,
        lambda s: OpenAIChatModel(model="fake", base_url=s.base_url, max_retries=0),
        react_script,
        "text",
    ),
}


def bodies(server: Any) -> list[bytes]:
    return [r.body for r in server.requests if r.method == "POST"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_request_after_a_resume_is_the_uninterrupted_one(tmp_path: Path, name: str) -> None:
    server_type, make_model, script, protocol = CASES[name]
    limits = TIGHT if name.endswith("wind-down") else LIMITS
    trace = tmp_path / "full.jsonl"
    with server_type(script()) as server, Journal(trace) as journal:
        agent = Agent(make_model(server), [add], journal=journal, limits=limits, protocol=protocol)
        assert agent.run("add 1+2 and 3+4").answer == "3 and 7"
        sent = bodies(server)
        issued = set(getattr(server, "signatures", ()))  # the real API knows its own everywhere
    assert len(sent) == 3
    lines = trace.read_bytes().split(b"\n")
    for cut in range(2, len(lines) - 2):  # from the run_start on, the stop cut off
        cut_trace = tmp_path / f"cut{cut}.jsonl"
        cut_trace.write_bytes(b"\n".join(lines[:cut]) + b"\n")
        turns = sum(e["type"] == "turn" for e in read_journal(cut_trace))
        with server_type(script()[turns:]) as server:
            if issued:
                server.signatures.update(issued)
            agent = Agent(make_model(server), [add], limits=limits, protocol=protocol)
            result = agent.resume(cut_trace)
            resent = bodies(server)
        assert result.answer == "3 and 7", (cut, result.error)
        assert resent == sent[turns:], f"cut after line {cut}"
