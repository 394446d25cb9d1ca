"""``--stream`` with an embedded model shows its step's thought, never the step's raw JSON."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from reactloop.messages import ModelTurn
from reactloop.models.local.thought_stream import ThoughtStream
from reactloop.models.local.turns import native_turn


def streamed(fragments: list[str]) -> str:
    shown: list[str] = []
    stream = ThoughtStream(shown.append)
    for fragment in fragments:
        stream(fragment)
    assert all(shown)  # nothing empty is passed on
    return "".join(shown)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


STEP = st.fixed_dictionaries(
    {"thought": st.text(max_size=40)},
    optional={
        "tool": st.text(max_size=10),
        "arguments": st.dictionaries(
            st.sampled_from(["thought", "expression", "key"]), st.text(max_size=10), max_size=2
        ),
        "answer": st.text(max_size=20),
    },
)


@given(STEP, st.lists(st.integers(min_value=0), max_size=12), st.booleans(), st.booleans())
def test_only_the_thought_is_passed_on_however_the_json_is_cut(
    step: dict[str, object], cuts: list[int], ascii_only: bool, spaced: bool
) -> None:
    text = json.dumps(step, ensure_ascii=ascii_only, indent=1 if spaced else None)
    assert streamed(split(text, cuts)) == step["thought"]


def test_the_thought_comes_as_it_is_generated_and_the_answer_not_at_all() -> None:
    fragments = ['{ "', "thought", '": "', "The capital", " is Paris", '.", "answer": "Paris" }']
    shown: list[str] = []
    stream = ThoughtStream(shown.append)
    for fragment in fragments:
        stream(fragment)
    assert shown == ["The capital", " is Paris", "."]


def test_a_native_answer_carries_its_thought_as_the_turns_text() -> None:
    text = '{"thought": "France\'s capital.", "answer": "Paris"}'
    turn = native_turn(text, step=1, base=ModelTurn())
    assert (turn.answer, turn.final_answer, turn.text) == ("Paris", "Paris", "France's capital.")
    bare = native_turn('{"thought": "", "answer": "Paris"}', step=1, base=ModelTurn())
    assert (bare.answer, bare.text) == ("Paris", "")
