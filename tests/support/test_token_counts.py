"""One reader of foreign token counts (``messages.token_count``), one cap, for every reader:
the OpenAI and Anthropic usage readers, the journal's (``usage_from``) and ``Usage.from_dict``."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.messages import MAX_TOKEN_COUNT, Usage, token_count
from reactloop.models.anthropic.reply import parse_usage as anthropic_usage
from reactloop.models.openai.reply import parse_usage as openai_usage
from reactloop.usage import usage_from

foreign = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.integers(min_value=0, max_value=10**20).map(str),
    st.lists(st.integers(), max_size=2),
)


@given(foreign)
def test_a_count_is_a_whole_number_within_the_cap_or_none(value: Any) -> None:
    count = token_count(value)
    assert count is None or (type(count) is int and 0 <= count <= MAX_TOKEN_COUNT)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
        assert count == value


@given(foreign)
def test_every_reader_reads_a_value_alike(value: Any) -> None:
    expected = token_count(value) or 0
    assert openai_usage({"prompt_tokens": value}).input_tokens == expected
    assert anthropic_usage({"output_tokens": value}).output_tokens == expected
    assert usage_from({"reasoning_tokens": value}).reasoning_tokens == expected


@given(foreign)
def test_from_dict_takes_exactly_the_whole_numbers_the_reader_counts(value: Any) -> None:
    whole = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and token_count(value) == value
    )
    if value is None or whole:
        assert Usage.from_dict({"cached_tokens": value}).cached_tokens == (value or 0)
    else:
        with pytest.raises(ValueError, match="usage cached_tokens"):
            Usage.from_dict({"cached_tokens": value})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (MAX_TOKEN_COUNT, MAX_TOKEN_COUNT),
        (MAX_TOKEN_COUNT + 1, None),
        (2**53, None),  # Usage.from_dict's old cap: one cap now
        ("12", 12),
        (" 7 ", 7),
        (3.9, 3),
        (-0.5, 0),
        (math.nan, None),
        (math.inf, None),
        ("9" * 5000, None),
        (True, None),
    ],
)
def test_the_edges_of_a_count(value: Any, expected: int | None) -> None:
    assert token_count(value) == expected
