"""Append-only prompt rendering and native reply parsing for local models (no model needed)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.messages import Message, ModelTurn, ToolCall, ToolSpec
from reactloop.models.local.chat_format import (
    CHATML,
    GEMMA,
    LLAMA3,
    PLAIN,
    PromptTokens,
    Turn,
    detect_format,
)
from reactloop.models.local.turns import RAW_TEXT_KEY, native_turn, to_turns


def _char_tokens(text: str, special: bool) -> list[int]:
    # A real (if simple) tokenizer: one token per character; special markers are negative.
    return [-ord(c) if special else ord(c) for c in text]


turns_strategy = st.lists(
    st.builds(
        Turn,
        role=st.sampled_from(["system", "user", "assistant"]),
        text=st.text(max_size=12),
    ),
    min_size=1,
    max_size=8,
)


@pytest.mark.parametrize("chat_format", [CHATML, GEMMA, LLAMA3, PLAIN])
@given(turns=turns_strategy)
def test_each_prompt_extends_the_previous_one_token_for_token(chat_format, turns) -> None:  # type: ignore[no-untyped-def]
    incremental = PromptTokens(chat_format, _char_tokens, [1])
    previous: list[int] = []
    for count in range(1, len(turns) + 1):
        tokens, kept = incremental.build(turns[:count])
        assert kept == count - 1
        # Everything but the generation header of the previous prompt is a prefix of this one.
        header = incremental._segments_tokens(
            chat_format.generation_prompt(turns[count - 2] if count > 1 else None), None
        )
        body = previous[: len(previous) - len(header)] if previous else [1]
        assert tokens[: len(body)] == body
        # And building from scratch gives the same tokens as building step by step.
        assert PromptTokens(chat_format, _char_tokens, [1]).build(turns[:count])[0] == tokens
        previous = tokens


def test_an_assistant_turn_reuses_the_tokens_it_was_generated_as() -> None:
    prompt = PromptTokens(CHATML, _char_tokens, [])
    prompt.remember_generated("Thought: x", [7, 7, 7])
    tokens, _ = prompt.build(
        [Turn(role="user", text="q"), Turn(role="assistant", text="Thought: x")]
    )
    assert tokens[tokens.index(7) : tokens.index(7) + 3] == [7, 7, 7]


def test_a_rewritten_turn_is_retokenized_from_there_on() -> None:
    prompt = PromptTokens(CHATML, _char_tokens, [])
    prompt.build([Turn(role="user", text="a"), Turn(role="user", text="b")])
    _, kept = prompt.build([Turn(role="user", text="a"), Turn(role="user", text="b\nc")])
    assert kept == 1


def test_gemma_folds_the_system_turn_into_the_first_user_turn() -> None:
    prompt = PromptTokens(GEMMA, lambda text, special: [ord(c) for c in text], [])
    tokens, _ = prompt.build([Turn(role="system", text="S"), Turn(role="user", text="U")])
    text = "".join(chr(t) for t in tokens)
    assert text == "<start_of_turn>user\nS\n\nU<end_of_turn>\n<start_of_turn>model\n"


def test_formats_are_detected_from_the_chat_template() -> None:
    assert detect_format("{{'<|im_start|>' + role}}") is CHATML
    assert detect_format("<start_of_turn>") is GEMMA
    assert detect_format("<|start_header_id|>") is LLAMA3
    assert detect_format(None) is PLAIN


CALC = ToolSpec(
    name="calculator",
    description="math",
    parameters={"type": "object", "properties": {"expression": {"type": "string"}}},
)


def test_native_turns_carry_the_tool_prompt_and_observations() -> None:
    messages = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="2+2?"),
        Message(
            role="assistant",
            content="t",
            tool_calls=(ToolCall(id="c", name="calculator", arguments='{"expression": "2+2"}'),),
        ),
        Message(role="tool", content='{"ok": true, "output": "4"}', tool_call_id="c"),
    ]
    turns = to_turns(messages, [CALC], native=True, worked_example=True)
    assert turns[0].role == "system" and "calculator" in turns[0].text
    assert turns[0].text.endswith("Be brief.") and "Example:" in turns[0].text
    assert json.loads(turns[2].text)["tool"] == "calculator"
    assert turns[3] == Turn(role="user", text='Observation: {"ok": true, "output": "4"}')


def test_a_generated_reply_comes_back_exactly_as_written() -> None:
    raw = {RAW_TEXT_KEY: '{ "thought": "t", "answer": "4" }'}
    turns = to_turns(
        [Message(role="assistant", content="4", raw=raw)], [], native=False, worked_example=False
    )
    assert turns == [Turn(role="assistant", text=raw[RAW_TEXT_KEY])]


@pytest.mark.parametrize(
    ("text", "calls", "answer", "problem"),
    [
        (
            '{"thought": "t", "tool": "calculator", "arguments": {"expression": "1"}}',
            ["calculator"],
            None,
            None,
        ),
        ('{"thought": "t", "answer": "42"}', [], "42", None),
        ('{"thought": "t", "answer": "4', [], None, "not one JSON object"),
        ("[1]", [], None, "not a JSON object"),
        ('{"thought": "t"}', [], None, "neither"),
    ],
)
def test_native_replies_become_turns(
    text: str, calls: list[str], answer: str | None, problem: str | None
) -> None:
    turn = native_turn(text, step=3, base=ModelTurn())
    assert [c.name for c in turn.tool_calls] == calls
    assert turn.answer == answer
    assert (turn.format_error is None) == (problem is None)
    if problem:
        assert problem in (turn.format_error or "")
    assert turn.raw_message == {RAW_TEXT_KEY: text}


@given(st.text(max_size=60))
def test_native_parsing_never_raises(text: str) -> None:
    turn = native_turn(text, step=1, base=ModelTurn())
    assert turn.tool_calls or turn.answer is not None or turn.format_error is not None
