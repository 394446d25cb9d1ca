"""What the journal keeps of an answer (``writeOnly`` fields and unjournaled answers left out),
an answer as a decision holds it read back whatever the journal says, and ``--answer`` read."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.cli.decisions import parse_answer
from reactloop.errors import UsageError
from reactloop.tools.mcp.answering import given_answer, journaled_content
from reactloop.tools.mcp.elicitation import ElicitationAnswer

FORM = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "pin": {"type": "string", "writeOnly": True},
    },
}
values = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
anything = st.recursive(
    values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


def test_a_write_only_field_is_named_in_omitted_and_its_value_kept_out() -> None:
    answer = ElicitationAnswer("accept", {"user": "ann", "pin": "1234"})
    assert journaled_content(FORM, answer) == ({"user": "ann"}, ["pin"])
    assert journaled_content(FORM, ElicitationAnswer("accept", {"user": "ann"})) == (
        {"user": "ann"},
        None,
    )


def test_an_unjournaled_answer_keeps_every_value_out_and_a_refusal_has_none() -> None:
    hidden = ElicitationAnswer("accept", {"user": "ann"}, journaled=False)
    assert journaled_content(FORM, hidden) == (None, ["user"])
    assert journaled_content(FORM, ElicitationAnswer("decline")) == (None, None)


@given(st.dictionaries(st.sampled_from(["action", "content", "other"]), anything) | anything)
def test_an_answer_read_from_a_decision_is_one_of_the_three_or_none(data: Any) -> None:
    answer = given_answer(data)
    if answer is None:
        return
    assert answer.action in ("accept", "decline", "cancel")
    assert answer.action == data["action"]
    assert answer.content == (data.get("content") if answer.action == "accept" else {}) or (
        answer.content == {} and not isinstance(data.get("content"), dict)
    )


def test_answer_option_reads_an_object_or_a_word() -> None:
    assert parse_answer('{"seats": 3}') == {"action": "accept", "content": {"seats": 3}}
    assert parse_answer(" decline ") == {"action": "decline"}
    assert parse_answer("cancel") == {"action": "cancel"}
    for text in ("[1]", "yes", "3", ""):
        with pytest.raises(UsageError, match="JSON object"):
            parse_answer(text)
