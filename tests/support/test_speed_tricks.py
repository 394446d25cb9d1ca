"""The speed tricks kept (``support/__init__.py`` lists them) decide exactly as the plain code
they stand in for: a twin may be faster, never different."""

from __future__ import annotations

from typing import Any, NamedTuple

from hypothesis import given
from hypothesis import strategies as st

from reactloop.loop.model_call import _checked_slowly, checked_turn
from reactloop.messages import ModelTurn, ToolCall, Usage

CALL = ToolCall(id="c1", name="t", arguments="{}")
texts = st.one_of(st.text(max_size=5), st.none(), st.integers(), st.binary(max_size=3))
optional_texts = st.one_of(st.none(), texts)
calls = st.one_of(
    st.lists(st.sampled_from([CALL, "not a call", None, 3]), max_size=3).map(tuple),
    st.lists(st.just(CALL), max_size=3),
    st.just(CALL),
    st.none(),
)
usages = st.one_of(st.just(Usage(input_tokens=3)), st.none(), st.just({"input_tokens": 3}))


class NotATurn(NamedTuple):
    text: str


@given(
    text=texts,
    reasoning=optional_texts,
    tool_calls=calls,
    finish_reason=st.one_of(st.sampled_from(["stop", "tool_calls", "length"]), texts),
    usage=usages,
    final_answer=optional_texts,
    format_error=optional_texts,
)
def test_the_quick_check_of_a_turn_judges_as_the_full_one(**fields: Any) -> None:
    turn = ModelTurn(**fields)
    assert checked_turn(turn) == _checked_slowly(turn)


def test_a_reply_that_is_not_a_turn_is_judged_by_the_full_check() -> None:
    reply = NotATurn(text="x")
    assert checked_turn(reply) == _checked_slowly(reply)
    assert "not a ModelTurn" in str(checked_turn(reply))
