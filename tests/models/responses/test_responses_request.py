"""Rendering: a neutral history as the exact input items of ``/responses``, and server state."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reactloop import Agent, Limits, StopReason
from reactloop.errors import ModelError
from reactloop.messages import Message, ToolCall, ToolSpec
from reactloop.models.base import ModelRequest
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.models.responses.reply import parse_response
from reactloop.models.responses.request import render_input, render_tool_choice, render_tools
from reactloop.models.responses.server_state import ServerState
from reactloop.testing import FakeResponsesServer, function_call, reasoning_item, response
from reactloop.tools.families.calculator import calculator_tool

NOT_EXECUTED = json.dumps({"ok": False, "error": "not executed: no result was recorded"})


def assistant(body: dict[str, Any]) -> Message:
    turn = parse_response(body, provider="t")
    return Message(
        role="assistant",
        content=turn.text,
        tool_calls=turn.tool_calls,
        reasoning=turn.reasoning,
        raw=turn.raw_message,
    )


def tool(call_id: str, content: str) -> Message:
    return Message(role="tool", content=content, tool_call_id=call_id, name="calculator")


def test_a_multi_step_history_renders_to_the_exact_input_items() -> None:
    thought = reasoning_item("Two sums.", encrypted_content="enc-1")
    first = response(
        reasoning=[thought],
        calls=[function_call("calculator", {"expression": "1+1"}),
               function_call("calculator", '{"expression": "1/0')],
        id="resp_1",
    )  # fmt: skip
    second = response("Working on it.", calls=[function_call("calculator", {"expression": "2"})])
    history = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="Sum things.", kind="task"),
        assistant(first),
        tool("call_1", '{"ok": false, "error": "invalid JSON arguments"}'),
        tool("call_0", '{"ok": true, "output": "2"}'),
        Message(role="user", content="2 steps left.", kind="notice"),
        assistant(second),
        tool("call_elsewhere", '{"ok": true, "output": "?"}'),
    ]
    instructions, items = render_input(history)
    assert instructions == "Be brief."
    calc_1 = {"type": "function_call", "name": "calculator", "status": "completed"}
    assert items == [
        {"role": "user", "content": "Sum things."},
        {"type": "reasoning", "id": "rs_0",
         "summary": [{"type": "summary_text", "text": "Two sums."}], "encrypted_content": "enc-1"},
        {**calc_1, "id": "fc_0", "call_id": "call_0", "arguments": '{"expression": "1+1"}'},
        {**calc_1, "id": "fc_1", "call_id": "call_1", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0",
         "output": '{"ok": true, "output": "2"}'},
        {"type": "function_call_output", "call_id": "call_1",
         "output": '{"ok": false, "error": "invalid JSON arguments"}'},
        {"role": "user", "content": "2 steps left."},
        {"type": "message", "id": "msg_0", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Working on it.", "annotations": []}]},
        {**calc_1, "id": "fc_0", "call_id": "call_0", "arguments": '{"expression": "2"}'},
        {"type": "function_call_output", "call_id": "call_0", "output": NOT_EXECUTED},
        {"role": "user", "content": '[result of an earlier tool call] {"ok": true, "output": "?"}'},
    ]  # fmt: skip


def test_a_history_from_another_adapter_renders_from_its_parts() -> None:
    call = ToolCall(id="call_9", name="calculator", arguments='{"expression": "3"}', wire_id="")
    history = [
        Message(role="user", content="q", kind="task"),
        Message(role="assistant", content="", tool_calls=(call,), raw={"role": "assistant"}),
        tool("call_9", "3"),
    ]
    assert render_input(history)[1][1:] == [
        {"type": "function_call", "call_id": "call_9", "name": "calculator",
         "arguments": '{"expression": "3"}'},
        {"type": "function_call_output", "call_id": "call_9", "output": "3"},
    ]  # fmt: skip


def test_tools_are_not_strict_and_the_tool_choice_has_the_responses_shape() -> None:
    spec = ToolSpec(name="calc", description="d", parameters={"type": "object"})
    assert render_tools([spec]) == [
        {"type": "function", "name": "calc", "description": "d",
         "parameters": {"type": "object"}, "strict": False}
    ]  # fmt: skip
    assert render_tool_choice("calc", [spec]) == {"type": "function", "name": "calc"}
    assert render_tool_choice("none", [spec]) == "none"
    with pytest.raises(ModelError):
        render_tool_choice("other", [spec])


def test_reasoning_models_ask_for_encrypted_reasoning_and_others_do_not() -> None:
    messages = [Message(role="user", content="hi")]
    reasoning = OpenAIResponsesModel(model="o4-mini").build_request(ModelRequest(messages=messages))
    plain = OpenAIResponsesModel(model="gpt-4.1").build_request(ModelRequest(messages=messages))
    assert reasoning["include"] == ["reasoning.encrypted_content"]
    assert "include" not in plain and plain["store"] is False


def test_server_state_sends_only_what_is_new_after_the_previous_response() -> None:
    script: list[Any] = [response(calls=[function_call("calculator", {"expression": "6*7"})]), "42"]
    with FakeResponsesServer(script) as server:
        model = OpenAIResponsesModel(model="fake", base_url=server.base_url, server_state=True)
        result = Agent(model, [calculator_tool()]).run("6*7?")
    assert result.answer == "42"
    first, second = (r.json for r in server.requests)
    assert first["store"] is True and "previous_response_id" not in first
    assert second["previous_response_id"] == "resp_1"
    assert [i["type"] for i in second["input"]] == ["function_call_output"]


def test_server_state_refuses_a_history_it_does_not_hold() -> None:
    state = ServerState("t")
    history = [Message(role="user", content="q")]
    turn = parse_response(response("a", id="resp_7"), provider="t")
    state.remember(history, turn)
    edited = [Message(role="user", content="q, edited"), assistant(response("a", id="resp_7"))]
    with pytest.raises(ModelError, match="compacted or edited"):
        state.continuation(edited, [])


def test_a_server_held_history_is_never_compacted() -> None:
    long = "x" * 4000
    script: list[Any] = [response(calls=[function_call("calculator", {"expression": "1"})]),
                         long, "done"]  # fmt: skip
    with FakeResponsesServer(script) as server:
        model = OpenAIResponsesModel(model="fake", base_url=server.base_url, server_state=True)
        limits = Limits(context_tokens=600, context_policy="summarize")
        result = Agent(model, [calculator_tool()], limits=limits).run("go " + long)
    assert result.stop_reason is StopReason.MAX_TOKENS
    assert all("previous_response_id" not in r.json or r.json["input"] for r in server.requests)


def test_a_stateless_history_is_compacted_and_every_request_stays_valid() -> None:
    script: list[Any] = [
        response(
            calls=[function_call("long_result", {"expression": str(n)})],
            usage={"input_tokens": 800 * (n + 1), "output_tokens": 5},
        )
        for n in range(4)
    ]
    script.append("done")

    def long_result(expression: str) -> str:
        """A long result.

        Args:
            expression: ignored
        """
        return "y" * 3000

    from reactloop import tool

    with FakeResponsesServer(script) as server:
        model = OpenAIResponsesModel(model="fake", base_url=server.base_url)
        limits = Limits(context_tokens=2000, context_policy="trim")
        result = Agent(model, [tool(long_result)], limits=limits).run("go")
    assert result.answer == "done"
    last = server.requests[-1].json["input"]
    outputs = [i["output"] for i in last if i.get("type") == "function_call_output"]
    assert len(outputs) == 4 and any(len(o) < 400 for o in outputs)  # trimmed, still paired


def test_a_reasoning_item_with_nothing_to_echo_is_left_out() -> None:
    bare = response(reasoning=[reasoning_item("only a summary")], calls=[
        function_call("calculator", {"expression": "1"})])  # fmt: skip
    history = [Message(role="user", content="q"), assistant(bare), tool("call_0", "1")]
    assert [i.get("type") for i in render_input(history)[1][1:]] == [
        "function_call", "function_call_output",
    ]  # fmt: skip


def test_a_reply_that_used_all_its_output_tokens_is_cut_whatever_its_status() -> None:
    """llama-server answers ``completed`` for a reply cut at ``max_output_tokens``."""
    used = {"input_tokens": 5, "output_tokens": 16}
    call = function_call("calculator", '{"expression": "1')
    with FakeResponsesServer([response(calls=[call], usage=used), "42"]) as server:
        model = OpenAIResponsesModel(model="fake", base_url=server.base_url, max_output_tokens=16)
        result = Agent(model, [calculator_tool()]).run("q")
    assert result.answer == "42" and result.tool_calls == 0
    assert server.requests[0].json["max_output_tokens"] == 16
