"""The text ReAct parser: documented cases and arbitrary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.models.react.parse import Action, FormatProblem, cut_observation, parse_reply


@pytest.mark.parametrize(
    ("text", "name", "argument", "thought"),
    [
        ("Thought: price\nAction: lookup[цена_чая]", "lookup", "цена_чая", "price"),
        ("Action: calculator[(2+3)*4]", "calculator", "(2+3)*4", ""),
        ("Action: lookup[a[1]]", "lookup", "a[1]", ""),
        ("Action: calculator[ 35 * 12 ]", "calculator", "35 * 12", ""),
        ("Thought: done\nAction: Finish[420]", "Finish", "420", "done"),
        ("thought: done\naction: finish[the answer]", "finish", "the answer", "done"),
        ("Action: FINISH[x]", "FINISH", "x", ""),
        ("Finish[42]", "Finish", "42", ""),
        ('Action: write[{"path": "a", "text": "b]"}]', "write", '{"path": "a", "text": "b]"}', ""),
        ("Action: calc[1]]", "calc", "1", ""),
        ("Action: calc[(1]", "calc", "(1", ""),
        ("Action: ping[]", "ping", "", ""),
        ("Action : note_v2.get [k]", "note_v2.get", "k", ""),
        ("Thought: a\nb\nAction: lookup[k]\nAction: lookup[j]", "lookup", "k", "a\nb"),
    ],
)
def test_parses(text, name, argument, thought):
    parsed = parse_reply(text)
    assert isinstance(parsed, Action)
    assert (parsed.name, parsed.argument, parsed.thought) == (name, argument, thought)


def test_finish_is_recognised_in_any_case():
    for word in ("Finish", "finish", "FINISH", "fInIsH"):
        parsed = parse_reply(f"Action: {word}[ok]")
        assert isinstance(parsed, Action) and parsed.is_finish


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("I think it is 420.", "no 'Action"),
        ("", "empty"),
        ("Action: calculator 2+2", "has no [argument]"),
        ("Action: calculator[2+2", "never closed"),
    ],
)
def test_format_problems(text, message):
    parsed = parse_reply(text)
    assert isinstance(parsed, FormatProblem)
    assert message in parsed.message


def test_cut_observation():
    assert cut_observation("Action: a[1]\nObservation: 5\nThought: x") == ("Action: a[1]", True)
    assert cut_observation("Action: a[1]") == ("Action: a[1]", False)


@given(st.text(max_size=300))
@settings(max_examples=500, deadline=None)
def test_arbitrary_text_never_raises(text):
    cut, _ = cut_observation(text)
    assert "Observation:" not in cut
    assert isinstance(parse_reply(cut), Action | FormatProblem)


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
arguments = st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=40)


@given(
    thought=st.text(alphabet=st.characters(blacklist_characters="[]:"), max_size=40),
    name=names,
    argument=arguments,
)
def test_round_trip(thought, name, argument):
    text = f"Thought: {thought}\nAction: {name}[{argument}]"
    if "Observation:" in text:
        return
    parsed = parse_reply(text)
    assert isinstance(parsed, Action)
    assert (parsed.name, parsed.argument) == (name, argument.strip())
