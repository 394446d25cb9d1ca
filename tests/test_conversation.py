"""A finished run continued with a follow-up: ``agent.run(text, history=result)`` and
``Conversation``. The follow-up's request holds the whole conversation with every call
answered (checked by the fake servers of both native protocols), its budget is its own, and
its journal links to the first run's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from helpers import add, call_turn
from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, read_journal, tool
from reactloop.conversation import Conversation
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer, completion
from reactloop.testing import tool_call as openai_call
from reactloop.testing.anthropic_replies import message, tool_use
from reactloop.testing.fake_anthropic import FakeAnthropicServer, request_problem


@tool(read_only=True)
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_a_follow_up_sees_the_first_run_and_spends_its_own_budget(tmp_path: Path) -> None:
    model = ScriptedModel([call_turn("add", a=2, b=3), "5", call_turn("multiply", a=5, b=4), "20"])
    agent = Agent(model, [add, multiply], limits=Limits(max_model_calls=2))
    first = agent.run("What is 2 + 3?", journal=Journal(tmp_path / "first.jsonl"))
    second = agent.run("And times 4?", history=first, journal=Journal(tmp_path / "second.jsonl"))
    assert (first.answer, second.answer) == ("5", "20")
    assert second.stop_reason is StopReason.FINAL_ANSWER
    assert second.model_calls == 2 and second.tool_calls == 1  # per run, not summed
    assert second.history[: len(first.history)] == first.history
    follow_up = second.history[len(first.history)]
    assert (follow_up.role, follow_up.content) == ("user", "And times 4?")
    assert [m.role for m in second.history].count("system") == 1
    sent = model.requests[2].messages
    assert [m.content for m in sent if m.kind == "task"] == ["What is 2 + 3?", "And times 4?"]
    # The scripted id "c1" comes back in the second run: the loop gives it a fresh id.
    ids = [c.id for m in second.history for c in m.tool_calls]
    assert len(ids) == len(set(ids)) == 2
    start = read_journal(tmp_path / "second.jsonl")[0]
    assert start["continues"] == {"trace": first.trace, "messages": len(first.history)}


def test_history_as_a_plain_list_of_messages_continues_too() -> None:
    model = ScriptedModel([call_turn("add", a=1, b=1), "2", "still 2"])
    agent = Agent(model, [add])
    first = agent.run("1 + 1?")
    second = agent.run("Sure?", history=list(first.history))
    assert second.answer == "still 2"
    assert len(model.requests[-1].messages) == len(first.history) + 1


def test_a_conversation_goes_on_after_a_turn_that_hit_a_limit(tmp_path: Path) -> None:
    model = ScriptedModel([call_turn("add", a=2, b=3), "5"])
    agent = Agent(model, [add], limits=Limits(max_model_calls=1, wind_down=False))
    chat = Conversation(agent, journal=Journal(tmp_path / "chat.jsonl"))
    cut = chat.ask("What is 2 + 3?")
    assert cut.stop_reason is StopReason.MAX_MODEL_CALLS
    assert chat.history[-1].role == "tool"  # the call the run could not read is answered
    done = chat.ask("Go on.")
    assert done.answer == "5"
    events = read_journal(tmp_path / "chat.jsonl")
    starts = [e for e in events if e["type"] == "run_start"]
    assert len(starts) == 2 and [e["type"] for e in events].count("stop") == 2
    assert starts[1]["continues"]["messages"] == len(cut.history)


def test_conversation_aask() -> None:
    model = ScriptedModel(["one", "two"])
    chat = Conversation(Agent(model, protocol="native"))

    async def main() -> list[str | None]:
        return [(await chat.aask("first")).answer, (await chat.aask("second")).answer]

    assert asyncio.run(main()) == ["one", "two"]
    assert [m.content for m in chat.history if m.role == "user"] == ["first", "second"]


def pairs_ok(messages: list[dict[str, Any]]) -> None:
    """Every OpenAI tool call is answered by the tool message right after its turn."""
    for index, wire in enumerate(messages):
        for offset, tool_call in enumerate(wire.get("tool_calls") or (), start=1):
            reply = messages[index + offset]
            assert (reply["role"], reply["tool_call_id"]) == ("tool", tool_call["id"])
        if wire["role"] == "tool":
            assert messages[index - 1]["role"] in ("assistant", "tool")


def test_openai_follow_up_request_has_no_orphaned_calls() -> None:
    script = [
        completion(tool_calls=[openai_call("add", {"a": 2, "b": 3})]),
        completion("5"),
        completion(tool_calls=[openai_call("multiply", {"a": 5, "b": 4})]),
        completion("20"),
    ]
    with FakeOpenAIServer(script) as server:
        agent = Agent(OpenAIChatModel(model="m", base_url=server.base_url), [add, multiply])
        first = agent.run("What is 2 + 3?")
        second = agent.run("And times 4?", history=first)
    assert second.answer == "20"
    bodies = [request.json for request in server.requests]
    for body in bodies:
        pairs_ok(body["messages"])
    last = bodies[-1]["messages"]
    assert [m["role"] for m in last] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool",
    ]  # fmt: skip
    assert last[5]["content"] == "And times 4?"


def test_anthropic_follow_up_request_is_accepted() -> None:
    script = [
        message(content=[tool_use("add", {"a": 2, "b": 3})]),
        message("5"),
        message(content=[tool_use("multiply", {"a": 5, "b": 4})]),
        message("20"),
    ]
    with FakeAnthropicServer(script) as server:
        agent = Agent(
            AnthropicModel(model="claude-test", base_url=server.base_url), [add, multiply]
        )
        first = agent.run("What is 2 + 3?")
        second = agent.run("And times 4?", history=first)
    assert (first.answer, second.answer) == ("5", "20"), second.error
    last = server.requests[-1].json
    assert request_problem(last) is None
    roles = [m["role"] for m in last["messages"]]
    assert last["messages"][4]["content"] == "And times 4?"
    for wire in last["messages"]:
        if isinstance(wire["content"], str):
            wire["content"] = [{"type": "text", "text": wire["content"]}]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    uses = [b["id"] for m in last["messages"] for b in m["content"] if b["type"] == "tool_use"]
    answered = [
        b["tool_use_id"]
        for m in last["messages"]
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert uses == answered and len(uses) == 2
