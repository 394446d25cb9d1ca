"""The Messages API request: system, tool_result placement, echoed content, tools, tool choice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop.errors import ModelError
from reactloop.messages import Message, ToolCall, ToolResult, ToolSpec
from reactloop.models.anthropic.caching import add_breakpoints
from reactloop.models.anthropic.request import (
    NOT_EXECUTED,
    render_messages,
    render_system,
    render_tool_choice,
    render_tools,
)
from reactloop.testing.fake_anthropic import request_problem

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
SPEC = ToolSpec(name="read_file", description="Read a file", parameters={"type": "object"})


def result(call_id: str, ok: bool = True, output: Any = "x", error: str = "boom") -> Message:
    content = ToolResult(call_id=call_id, name="t", ok=ok, output=output, error=error).to_content()
    return Message(role="tool", content=content, tool_call_id=call_id, name="t")


def call(call_id: str, name: str = "read_file", arguments: str = '{"path": "a"}') -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, wire_id=call_id)


def assistant(*calls: ToolCall, text: str = "", raw: Any = None) -> Message:
    return Message(role="assistant", content=text, tool_calls=calls, raw=raw)


def test_the_recorded_continuation_is_rendered_as_recorded() -> None:
    fixture = json.loads((WIRE / "anthropic_request_tool_results.json").read_text())
    user, reply, _ = fixture["messages"]
    calls = [call(b["id"], arguments=json.dumps(b["input"])) for b in reply["content"][2:]]
    history = [
        Message(role="user", content=user["content"], kind="task"),
        assistant(*calls, text="Reading both files.", raw=reply),
        result(calls[0].id, output="hello from foo\n"),
        result(calls[1].id, ok=False, error="FileNotFoundError: src/bar.txt does not exist"),
        Message(role="user", content="If a file is missing, say so and continue.", kind="notice"),
    ]
    wire = render_messages(history)
    assert wire[:2] == fixture["messages"][:2]  # the assistant content, signature and all
    blocks = wire[2]["content"]
    expected = fixture["messages"][2]["content"]
    assert [(b["type"], b.get("tool_use_id"), b.get("is_error")) for b in blocks] == [
        (b["type"], b.get("tool_use_id"), b.get("is_error")) for b in expected
    ]
    assert json.loads(blocks[0]["content"]) == {"ok": True, "output": "hello from foo\n"}
    assert blocks[2] == expected[2]
    assert request_problem({"max_tokens": 1, "messages": wire}) is None


def test_system_is_top_level_and_not_a_message() -> None:
    history = [Message(role="system", content="Be brief."), Message(role="user", content="hi")]
    assert render_system(history) == "Be brief."
    assert render_messages(history) == [{"role": "user", "content": "hi"}]


def test_results_come_first_in_call_order_one_per_call() -> None:
    a, b = call("toolu_a"), call("toolu_b")
    history = [
        Message(role="user", content="go"),
        assistant(a, b),
        Message(role="user", content="a note", kind="notice"),
        result("toolu_b", ok=False),
        result("toolu_a"),
    ]
    blocks = render_messages(history)[2]["content"]
    assert [b.get("tool_use_id") for b in blocks] == ["toolu_a", "toolu_b", None]
    assert [b.get("is_error", False) for b in blocks[:2]] == [False, True]
    assert blocks[2] == {"type": "text", "text": "a note"}


def test_a_call_without_result_gets_a_not_executed_error_and_orphans_become_text() -> None:
    history = [
        Message(role="user", content="go"),
        assistant(call("toolu_a")),
        result("nobody_asked"),
    ]
    blocks = render_messages(history)[2]["content"]
    assert blocks[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_a",
        "content": NOT_EXECUTED,
        "is_error": True,
    }
    assert blocks[1]["type"] == "text" and "[result of an earlier tool call]" in blocks[1]["text"]


def test_consecutive_turns_alternate_roles() -> None:
    history = [
        Message(role="user", content="go"),
        assistant(call("toolu_1")),
        result("toolu_1"),
        assistant(call("toolu_2")),
        result("toolu_2"),
        assistant(text="done"),
    ]
    wire = render_messages(history)
    assert [m["role"] for m in wire] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert request_problem({"max_tokens": 1, "messages": wire}) is None


def test_echo_keeps_blocks_drops_empty_text_and_repairs_cut_off_input() -> None:
    raw = {
        "role": "assistant",
        "content": [
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": ""},
            {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": '{"path": "a'},
        ],
    }
    message = assistant(call("toolu_x", arguments='{"path": "a'), raw=raw)
    content = render_messages([Message(role="user", content="go"), message])[1]["content"]
    assert content[0] == raw["content"][0]
    assert content[1] == {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {}}


def test_without_raw_content_is_built_and_missing_or_repeated_ids_use_the_loop_id() -> None:
    first = ToolCall(id="call_1_0", name="read_file", arguments='{"path": "a"}', wire_id="")
    second = ToolCall(id="call_1_1", name="read_file", arguments="not json", wire_id="dup")
    third = ToolCall(id="call_1_2", name="read_file", arguments="{}", wire_id="dup")
    history = [
        Message(role="user", content="go"),
        assistant(first, second, third, text="Reading."),
        result("call_1_0"),
        result("call_1_1"),
        result("call_1_2"),
    ]
    wire = render_messages(history)
    uses = wire[1]["content"]
    assert uses[0] == {"type": "text", "text": "Reading."}
    assert [(u["id"], u["input"]) for u in uses[1:]] == [
        ("call_1_0", {"path": "a"}),
        ("dup", {}),
        ("call_1_2", {}),
    ]
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["call_1_0", "dup", "call_1_2"]
    assert request_problem({"max_tokens": 1, "messages": wire}) is None


def test_an_empty_assistant_reply_is_still_a_message() -> None:
    history = [
        Message(role="user", content="go"),
        assistant(raw={"role": "assistant", "content": [{"type": "text", "text": ""}]}),
        Message(role="user", content="That reply was empty.", kind="format_error"),
    ]
    wire = render_messages(history)
    assert wire[1]["content"] == [{"type": "text", "text": "(empty reply)"}]
    assert request_problem({"max_tokens": 1, "messages": wire}) is None


def test_tools_carry_input_schema() -> None:
    assert render_tools([SPEC, ToolSpec(name="now", description="time")]) == [
        {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},
        {
            "name": "now",
            "description": "time",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("read_file", {"type": "tool", "name": "read_file"}),
    ],
)
def test_tool_choice_map(choice: str, wire: dict[str, Any]) -> None:
    assert render_tool_choice(choice, [SPEC]) == wire
    serial = render_tool_choice(choice, [SPEC], parallel=False)
    assert serial == (wire if choice == "none" else {**wire, "disable_parallel_tool_use": True})


def test_tool_choice_errors() -> None:
    assert render_tool_choice("auto", []) is None
    with pytest.raises(ModelError, match="not one of the tools"):
        render_tool_choice("nope", [SPEC])
    with pytest.raises(ModelError, match="extended thinking"):
        render_tool_choice("required", [SPEC], thinking=True)
    assert render_tool_choice("none", [SPEC], thinking=True) == {"type": "none"}


def test_cache_breakpoints_on_tools_system_and_last_message_without_changing_the_body() -> None:
    body = {
        "system": "Be brief.",
        "tools": render_tools([SPEC, ToolSpec(name="now", description="t")]),
        "messages": [{"role": "user", "content": "hi"}],
    }
    before = json.dumps(body)
    marked = add_breakpoints(body)
    assert json.dumps(body) == before
    ephemeral = {"type": "ephemeral"}
    assert "cache_control" not in marked["tools"][0]
    assert marked["tools"][1]["cache_control"] == ephemeral
    assert marked["system"] == [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}]
    assert marked["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": ephemeral}]}
    ]


def test_the_prefix_before_the_last_breakpoint_is_the_same_at_the_next_step() -> None:
    history = [Message(role="user", content="go"), assistant(call("toolu_1")), result("toolu_1")]
    first = render_messages(history)
    later = render_messages([*history, assistant(call("toolu_2")), result("toolu_2")])
    assert later[: len(first)] == first
