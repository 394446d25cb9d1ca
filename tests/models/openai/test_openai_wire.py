"""History rendering and reply parsing for Chat Completions (no server needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.errors import ModelError
from reactloop.messages import Message, ToolCall, ToolSpec
from reactloop.models.openai.reply import parse_completion, parse_usage
from reactloop.models.openai.request import (
    render_history,
    render_tool_choice,
    safe_arguments,
)
from reactloop.testing import completion, tool_call

SPECS = [ToolSpec(name="add", description="Add."), ToolSpec(name="now", description="Time.")]


def call(
    id: str, name: str = "add", arguments: str = '{"a": 1}', wire_id: str | None = None
) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments, wire_id=wire_id)


def result(call_id: str, content: str = '{"ok": true, "output": 2}') -> Message:
    return Message(role="tool", content=content, tool_call_id=call_id, name="add")


def test_invalid_and_non_object_arguments_are_echoed_as_an_empty_object() -> None:
    assert safe_arguments('{"a": 1}') == '{"a": 1}'
    for bad in ('{"a": 1', "", "[1, 2]", '"{\\"a\\": 1}"', "{'a': 1}", "null"):
        assert safe_arguments(bad) == "{}"


@given(st.text(max_size=60))
def test_safe_arguments_always_gives_a_json_object(text: str) -> None:
    assert isinstance(json.loads(safe_arguments(text)), dict)


def test_missing_wire_id_uses_the_loop_id_on_both_sides() -> None:
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=(call("call_1_0", wire_id=None),)),
        result("call_1_0"),
    ]
    wire = render_history(history)
    assert wire[1]["tool_calls"][0]["id"] == wire[2]["tool_call_id"] == "call_1_0"


def test_duplicate_wire_ids_in_one_turn_are_echoed_as_sent_and_answered_in_order() -> None:
    calls = (call("a", wire_id="dup"), call("b", arguments='{"a": 2}', wire_id="dup"))
    history = [
        Message(role="assistant", tool_calls=calls),
        result("a", "first"),
        result("b", "second"),
    ]
    wire = render_history(history)
    assert [c["id"] for c in wire[0]["tool_calls"]] == ["dup", "dup"]
    assert [(m["tool_call_id"], m["content"]) for m in wire[1:]] == [
        ("dup", "first"),
        ("dup", "second"),
    ]


def test_results_are_put_back_in_call_order_and_unanswered_calls_get_a_not_executed_result() -> (
    None
):
    calls = (call("a", wire_id="w1"), call("b", wire_id="w2"), call("c", wire_id="w3"))
    history = [
        Message(role="assistant", tool_calls=calls),
        result("b", "B"),
        Message(role="user", content="Warning: repeated call", kind="notice"),
        result("a", "A"),
    ]
    wire = render_history(history)
    assert [m.get("tool_call_id") for m in wire[1:4]] == ["w1", "w2", "w3"]
    assert json.loads(wire[3]["content"])["ok"] is False
    assert wire[4] == {"role": "user", "content": "Warning: repeated call"}


def test_a_tool_message_answering_no_call_becomes_a_user_note() -> None:
    wire = render_history([Message(role="user", content="go"), result("ghost", "orphan")])
    assert wire[1]["role"] == "user" and "orphan" in wire[1]["content"]


def test_harness_notes_are_user_messages() -> None:
    for kind in ("notice", "format_error", "wind_down", "truncated"):
        wire = render_history([Message(role="system", content="note", kind=kind)])
        assert wire == [{"role": "user", "content": "note"}]


def test_raw_message_content_and_reasoning_are_echoed_but_vendor_extras_are_not() -> None:
    raw = {
        "role": "assistant",
        "content": "\n\n",
        "reasoning_content": "think",
        "tool_calls": [tool_call("add", {"a": 1}, id="x")],
        "function_call": {"name": "add", "arguments": "{}"},
        "annotations": None,
        "audio": None,
    }
    message = Message(role="assistant", content="", tool_calls=(call("x", wire_id="x"),), raw=raw)
    echoed = render_history([message, result("x")])[0]
    assert echoed == {
        "role": "assistant",
        "content": "\n\n",
        "reasoning_content": "think",
        "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
        ],
    }


def test_reasoning_is_not_echoed_on_turns_without_tool_calls() -> None:
    raw = {"role": "assistant", "content": "", "reasoning_content": "hmm"}
    echoed = render_history([Message(role="assistant", content="", reasoning="hmm", raw=raw)])
    assert echoed == [{"role": "assistant", "content": ""}]


def test_reasoning_without_a_raw_message_is_sent_as_reasoning_content() -> None:
    message = Message(role="assistant", tool_calls=(call("x"),), reasoning="plan")
    assert render_history([message, result("x")])[0]["reasoning_content"] == "plan"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("now", {"type": "function", "function": {"name": "now"}}),
    ],
)
def test_tool_choice(choice: str, expected: Any) -> None:
    assert render_tool_choice(choice, SPECS) == expected


def test_tool_choice_naming_an_unknown_tool_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="'nope' is not one of the tools"):
        render_tool_choice("nope", SPECS)


def test_no_tools_means_no_tool_choice() -> None:
    assert render_tool_choice("required", []) is None


@pytest.mark.parametrize("content", [None, "", "Let me check.", "  "])
def test_content_beside_tool_calls(content: str | None) -> None:
    turn = parse_completion(
        completion(content, tool_calls=[tool_call("add", {"a": 1})]), provider="p"
    )
    assert turn.text == (content or "")
    assert [c.name for c in turn.tool_calls] == ["add"] and turn.format_error is None
    assert turn.finish_reason == "tool_calls"


def test_empty_reply_is_a_format_error_not_an_answer() -> None:
    turn = parse_completion(completion(None), provider="p")
    assert turn.format_error and turn.answer is None


@pytest.mark.parametrize("missing", [None, ""])
def test_missing_or_empty_ids_get_their_position_and_an_empty_wire_id(missing: str | None) -> None:
    calls = [tool_call("add", {"a": n}) for n in range(2)]
    for entry in calls:
        entry["id"] = missing
    turn = parse_completion(completion(tool_calls=calls), provider="p")
    assert [c.id for c in turn.tool_calls] == ["call_0", "call_1"]  # the same in every form
    assert all(c.wire_id == "" for c in turn.tool_calls)  # "": the server sent none


def test_duplicate_ids_in_one_reply_are_kept_for_the_loop_to_make_unique() -> None:
    calls = [tool_call("add", {"a": 1}, id="same"), tool_call("add", {"a": 2}, id="same")]
    turn = parse_completion(completion(tool_calls=calls), provider="p")
    assert [(c.id, c.wire_id) for c in turn.tool_calls] == [("same", "same"), ("same", "same")]


def test_arguments_sent_as_an_object_are_kept_as_json_text() -> None:
    entry = {"id": "x", "type": "function", "function": {"name": "add", "arguments": {"a": 1}}}
    turn = parse_completion(completion(tool_calls=[entry]), provider="p")
    assert json.loads(turn.tool_calls[0].arguments) == {"a": 1}


def test_usage_with_cached_and_reasoning_tokens() -> None:
    usage = parse_usage(
        {
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "prompt_tokens_details": None,
            "prompt_cache_hit_tokens": 64,
            "completion_tokens_details": {"reasoning_tokens": 7},
        }
    )
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.cached_tokens,
        usage.reasoning_tokens,
    ) == (
        100,
        20,
        64,
        7,
    )


def test_unparseable_tool_call_text_is_surfaced_as_a_format_error() -> None:
    turn = parse_completion(completion('<tool_call>{"name": "add", "argu'), provider="p")
    assert turn.format_error and "<tool_call>" in turn.format_error and not turn.tool_calls


@pytest.mark.parametrize(
    "body",
    [[], "text", {}, {"choices": []}, {"choices": [{"finish_reason": "stop"}]}, {"choices": [1]}],
)
def test_bodies_that_are_not_completions_are_model_errors(body: Any) -> None:
    with pytest.raises(ModelError):
        parse_completion(body, provider="p")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
MESSAGES = st.fixed_dictionaries(
    {},
    optional={
        "content": JSON,
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": JSON,
                    "function": JSON
                    | st.fixed_dictionaries({}, optional={"name": JSON, "arguments": JSON}),
                },
            ),
            max_size=3,
        ),
        "reasoning_content": JSON,
    },
)


@given(MESSAGES, JSON, JSON)
def test_any_reply_parses_to_a_turn_or_a_model_error(message: Any, finish: Any, usage: Any) -> None:
    body = {"choices": [{"message": message, "finish_reason": finish}], "usage": usage}
    try:
        turn = parse_completion(body, provider="p")
    except ModelError:
        return
    history = [
        Message(
            role="assistant", content=turn.text, tool_calls=turn.tool_calls, raw=turn.raw_message
        )
    ]
    wire = render_history(history)
    for entry in wire[0].get("tool_calls", []):
        assert isinstance(json.loads(entry["function"]["arguments"]), dict)
    assert len(wire) == 1 + len(turn.tool_calls)
