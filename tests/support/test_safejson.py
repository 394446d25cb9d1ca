"""Property tests of every decoder and encoder of the loop's area, with deep nesting and huge
numbers among the inputs: ``safe_loads``, ``loads_units``, ``nesting_exceeds``,
``decode_arguments``, ``canonical_key``, ``json_line`` (read back by the journal's reader),
``ToolCall``'s normalisation, and ``safe_form``."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.loop.loop_guard import canonical_key
from reactloop.messages import ToolCall
from reactloop.support.json_decode import (
    MAX_DEPTH,
    JSONRefused,
    loads_units,
    nesting_exceeds,
    safe_loads,
)
from reactloop.support.json_encode import (
    JOURNAL_DEPTH,
    canonical,
    escape_surrogates,
    json_line,
    safe_form,
)
from reactloop.tools.prepared import ArgumentsError, decode_arguments

any_text = st.text(st.characters(codec=None, categories=("L", "N", "P", "S", "Z", "Cc", "Cs")))
bracket_text = st.text(alphabet='[]{}"\\,:ab', max_size=30)  # strings full of brackets
leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**4000, max_value=10**4400)  # past the digit limit once written
    | st.floats()
    | any_text
    | bracket_text
)
values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(any_text, children, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A value wrapped ``depth`` times in lists or objects (up to far past any limit)."""
    value = draw(values)
    depth = draw(st.integers(min_value=0, max_value=3000))
    shapes = draw(st.lists(st.booleans(), min_size=1, max_size=4))
    for level in range(depth):
        value = [value] if shapes[level % len(shapes)] else {"k": value}
    return value


def deep_text(value: Any) -> str:
    """JSON text for a value of any depth (the encoder would recurse; this does not)."""
    prefix, suffix = [], []
    while isinstance(value, list | dict) and len(value) == 1:
        if isinstance(value, list):
            prefix.append("[")
            suffix.append("]")
            (value,) = value
        else:
            ((key, value),) = value.items()
            prefix.append("{" + json.dumps(key) + ":")
            suffix.append("}")
    try:
        middle = json.dumps(value)
    except ValueError:  # an integer beyond the digit limit
        middle = "9" * 5000
    return "".join(prefix) + middle + "".join(reversed(suffix))


def depth_of(text: str) -> int:
    """The nesting of a JSON text, by a plain scan (the reference for ``nesting_exceeds``)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (not escaped and ch == "\\"), in_string and (escaped or ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


json_texts = st.one_of(
    deep_values().map(deep_text),
    values.map(lambda v: deep_text(v)),
    st.text(max_size=60),
    st.integers(min_value=1, max_value=6000).map(lambda n: "[" * n),
    st.integers(min_value=4000, max_value=6000).map(lambda n: '{"n": ' + "1" * n + "}"),
    st.sampled_from(
        ['{"a": 1} x', "NaN", "[1,", '"\\ud800"', "1e400", "{}{}", "-", '"\\ud83d\\ude00"']
    ),
)


@settings(max_examples=300, deadline=None)
@given(text=json_texts, limit=st.sampled_from([1, 5, MAX_DEPTH, JOURNAL_DEPTH]))
def test_nesting_exceeds_agrees_with_a_plain_scan(text: str, limit: int) -> None:
    assert nesting_exceeds(text, limit) == (depth_of(text) > limit)


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_safe_loads_decodes_or_refuses_and_never_raises_anything_else(text: str) -> None:
    try:
        value = safe_loads(text)
    except JSONRefused as exc:
        assert str(exc)
        return
    assert depth_of(text) <= MAX_DEPTH
    assert json.dumps(value, ensure_ascii=False) == json.dumps(json.loads(text), ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_the_units_reader_never_raises_anything_but_refusal(text: str) -> None:
    with contextlib.suppress(JSONRefused):
        loads_units(text)


@settings(max_examples=300, deadline=None)
@given(text=any_text)
def test_each_escaped_surrogate_reads_back_as_one_code_point(text: str) -> None:
    written = escape_surrogates(json.dumps({"s": text}, ensure_ascii=False))
    written.encode("utf-8")  # no raw surrogate is left
    assert loads_units(written) == {"s": text}


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_argument_decoding_gives_an_object_or_a_message_for_the_model(text: str) -> None:
    try:
        arguments = decode_arguments(text)
    except ArgumentsError as exc:
        assert str(exc).startswith("arguments ")
        return
    assert isinstance(arguments, dict)


@settings(max_examples=200, deadline=None)
@given(text=json_texts)
def test_the_loop_guards_key_is_made_for_any_argument_text(text: str) -> None:
    assert canonical_key(ToolCall(id="a", name="t", arguments=text)).startswith("t\x00")


@settings(max_examples=200, deadline=None)
@given(value=deep_values())
def test_canonical_and_journal_lines_never_raise_on_any_value(value: Any) -> None:
    assert isinstance(canonical(value), str)
    line = json_line({"type": "x", "v": value})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    read = loads_units(line.decode("utf-8"), max_depth=JOURNAL_DEPTH)
    assert read["type"] == "x"


@settings(max_examples=200, deadline=None)
@given(value=values)
def test_a_shallow_value_is_journaled_exactly(value: Any) -> None:
    line = json_line({"v": value})
    read = loads_units(line.decode("utf-8"), max_depth=JOURNAL_DEPTH)["v"]
    expected = safe_form(value, max_depth=JOURNAL_DEPTH)  # huge integers are named, not written
    assert same(read, expected)


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself and 1 told from 1.0 and True."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(max_examples=200, deadline=None)
@given(arguments=deep_values() | st.none() | any_text)
def test_a_tool_call_takes_any_arguments_as_text(arguments: Any) -> None:
    call = ToolCall(id="a", name="t", arguments=arguments)
    assert isinstance(call.arguments, str)
    if isinstance(arguments, str):
        assert call.arguments == arguments


def test_safe_form_bounds_cycles_and_hostile_objects() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    cycle.append(cycle)

    class Hostile:
        def __str__(self) -> str:
            raise RuntimeError("no")

    form = safe_form({"h": Hostile(), 3: "int key", "c": cycle}, max_depth=50, max_nodes=1000)
    text = json.dumps(form)
    assert "raised RuntimeError" in text and '"3": "int key"' in text
    assert "<not written: the value is too large>" in text and len(text) < 100_000


@pytest.mark.parametrize("text", ["[" * 100_000, '{"n": ' + "7" * 5000 + "}"])
def test_the_two_shapes_of_the_campaign_are_refused_cleanly(text: str) -> None:
    with pytest.raises(JSONRefused):
        safe_loads(text)
    with pytest.raises(ArgumentsError):
        decode_arguments(text)


def test_a_surrogate_pair_in_a_key_reads_back_as_two_code_points() -> None:
    from reactloop.support.json_decode import loads_units
    from reactloop.support.json_encode import json_line

    value = {"\ud800\udc00": {"\udfff": "\ud83d\ude00"}}
    back = loads_units(json_line({"v": value}).decode())["v"]
    assert json.dumps(back) == json.dumps(value)  # json.dumps tells the pair from the emoji
