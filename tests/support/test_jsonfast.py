"""The fast JSON paths give exactly what the standard library would: the journal's lines, the
loop guard's canonical keys, a tool result's content and the journal's microsecond times."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.journal.events import micros
from reactloop.messages import ToolResult
from reactloop.support.json_decode import loads, loads_units
from reactloop.support.json_encode import canonical, dumps, is_plain, json_line

# Text with lone surrogates too (a tool may decode bytes with ``surrogateescape``).
any_text = st.text(st.characters(codec=None, categories=("L", "N", "P", "S", "Z", "Cc", "Cs")))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=20,
)


def spelled(value: Any) -> str:
    """One text per value that tells NaN from null and 1 from 1.0 (``==`` cannot), and a
    surrogate pair written as two code points from the one character it stands for."""
    return json.dumps(value, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_a_journal_line_reads_back_as_the_value_it_was_made_from(value: Any) -> None:
    line = json_line({"v": value})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    line.decode("utf-8")  # valid UTF-8, lone surrogates included (they are escaped)
    assert spelled(loads_units(line.decode())["v"]) == spelled(value)


# What orjson writes as null or refuses: the standard library writes these lines.
HARD_VALUES = [float("nan"), float("inf"), -float("inf"), 2**70, "lone \ud800", {1: "int key"}]


def test_values_orjson_cannot_write_exactly_go_through_the_standard_library() -> None:
    for value in HARD_VALUES:
        line = json_line({"v": [value]})
        read = json.loads(line)["v"][0]
        expected = json.loads(json.dumps(value))
        assert spelled(read) == spelled(expected), value
    assert b"NaN" in json_line({"v": float("nan")})


@settings(max_examples=200, deadline=None)
@given(value=st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text())
def test_plain_values_need_no_read_back(value: Any) -> None:
    assert is_plain(value)
    assert json_line({"v": value}, verify=False) == json_line({"v": value})


def test_nan_and_the_infinities_are_not_plain() -> None:
    assert not any(is_plain(x) for x in (float("nan"), float("inf"), -float("inf")))
    assert is_plain(1.5) and is_plain(-0.0) and is_plain(1e308)
    assert not is_plain([1]) and not is_plain({"a": 1})


@settings(max_examples=300, deadline=None)
@given(value=json_values, seed=st.integers())
def test_canonical_ignores_key_order_and_nothing_else(value: Any, seed: int) -> None:
    assert canonical(_shuffled(value, random.Random(seed))) == canonical(value)


def test_canonical_tells_nan_and_the_infinities_from_null() -> None:
    keys = {canonical({"x": v}) for v in (None, float("nan"), float("inf"), -float("inf"))}
    assert len(keys) == 4
    assert canonical({"b": 1, "a": [1.0, "ü"]}) == '{"a":[1.0,"ü"],"b":1}'


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@settings(max_examples=300, deadline=None)
@given(output=any_text | st.integers() | json_values)
def test_a_tool_result_reads_as_dumps_would_write_it(output: Any) -> None:
    result = ToolResult(call_id="c", name="t", ok=True, output=output)
    assert result.to_content() == dumps({"ok": True, "output": output})


@settings(max_examples=300, deadline=None)
@given(seconds=st.floats(min_value=0, max_value=1e6))
def test_micros_rounds_to_the_microsecond_and_prints_short(seconds: float) -> None:
    value = micros(seconds)
    assert math.isclose(value, round(seconds, 6), abs_tol=1.01e-6)
    assert value == float(f"{value:.6f}")


json_texts = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=40),
    st.sampled_from(['{"a": 1} x', "NaN", "[1,", '"\\ud800"', "1e400", "{}{}", "-", "tru"]),
)


@settings(max_examples=500, deadline=None)
@given(text=json_texts)
def test_loads_reads_as_json_loads_and_fails_as_it_does(text: str) -> None:
    text = text.strip()
    try:
        expected = json.loads(text)
    except json.JSONDecodeError as exc:
        with pytest.raises(json.JSONDecodeError) as raised:
            loads(text)
        assert (raised.value.msg, raised.value.pos) == (exc.msg, exc.pos)
    else:
        assert spelled(loads(text)) == spelled(expected)
