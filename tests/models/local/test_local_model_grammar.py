"""Grammar generation for local models: what each grammar lets the model write, and that
llama.cpp's own grammar parser takes it.

What a grammar allows is judged by ``tests/gbnf.py`` (a GBNF recogniser: exact text, code point
by code point, as llama.cpp's sampler judges it); that llama.cpp parses every grammar we make is
checked against the real llama-server (prebuilt, ``local_servers.llama_server``), which answers
a grammar it cannot parse with HTTP 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gbnf import accepts as grammar_accepts
from local_servers import llama_server
from reactloop.messages import ToolSpec
from reactloop.models.base import ReactFormat
from reactloop.models.local.grammar import (
    gbnf_literal,
    grammar_tools,
    json_schema_grammar,
    react_grammar,
    tool_call_schema,
)

REQUIRED_BY = "REACTLOOP_REQUIRE_LLAMA_SERVER"


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("grammar"), required_by=REQUIRED_BY) as url:
        yield url


def check_grammar(url: str, grammar: str) -> None:
    """llama-server samples one token under ``grammar``: 400 when it cannot parse it."""
    body = {"prompt": "Thought:", "n_predict": 1, "grammar": grammar, "cache_prompt": True}
    reply = httpx.post(f"{url}/completion", json=body, timeout=120)
    assert reply.status_code == 200, reply.text[:500]


SPEC = ReactFormat(
    tools=(("calculator", ("expression",)), ("lookup", ("key",)), ("add", ("a", "b")), ("now", ()))
)


@pytest.mark.parametrize(
    "text",
    [
        "Thought: I need the price.\nAction: lookup[цена_чая]",
        "Thought: compute\nAction: calculator[(2+3)*4]",
        "Thought: nested\nAction: calculator[a[1] + b[[2]]]",
        'Thought: two\nAction: add[{"a": 1, "b": "x"}]',
        'Thought: two\nAction: add[{"a":[1, 2],"b":{"c": null}}]',
        "Thought: time\nAction: now[]",
        "Thought: done\nAction: Finish[420]",
    ],
)
def test_grammar_accepts_well_formed_steps(text: str) -> None:
    assert grammar_accepts(react_grammar(SPEC), text)


@pytest.mark.parametrize(
    "text",
    [
        "Thought: x\nAction: calculater[1+1]",  # not a tool
        "Thought: x\nAction: Calculator[1+1]",  # names are exact
        "Thought: x\nAction: finish[1]",
        "Thought: x\nAction: lookup[a]b]",  # unbalanced
        "Thought: x\nAction: lookup[]",  # one parameter: the argument is required
        "Thought: x\nAction: lookup[a\nb]",
        "Thought: x\nAction: now[x]",
        'Thought: x\nAction: add[{"a": 1}]',  # both parameters
        'Thought: x\nAction: add[{"b": 1, "a": 2}]',
        "Thought: x\nAction: lookup[a] trailing",
        "Thought: x\nthen\nAction: lookup[a]",
        "Action: lookup[a]",
        "Thought: x\nAction: lookup[a]\nObservation: 35",
    ],
)
def test_grammar_refuses_malformed_steps(text: str) -> None:
    assert not grammar_accepts(react_grammar(SPEC), text)


def test_finish_only_grammar_refuses_tools() -> None:
    grammar = react_grammar(ReactFormat(tools=SPEC.tools, finish_only=True))
    assert grammar_accepts(grammar, "Thought: ok\nAction: Finish[42]")
    assert not grammar_accepts(grammar, "Thought: ok\nAction: calculator[1]")


def test_thoughts_are_bounded() -> None:
    grammar = react_grammar(SPEC, max_thought_chars=20)
    assert grammar_accepts(grammar, "Thought: " + "a" * 20 + "\nAction: Finish[1]")
    assert not grammar_accepts(grammar, "Thought: " + "a" * 21 + "\nAction: Finish[1]")


def test_the_grammar_offers_each_tool_once_and_never_a_tool_named_finish() -> None:
    react = ReactFormat(
        tools=(("calculator", ("expression",)), ("Finish", ()), ("calculator", ()), ("", ()))
    )
    assert grammar_tools(react) == (("calculator", ("expression",)),)
    assert grammar_tools(ReactFormat(tools=react.tools, finish_only=True)) == ()


any_names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=24)
# Names a model can write: llama.cpp's tokenizers mangle NUL and unassigned code points.
printable_names = st.text(
    alphabet=st.characters(whitelist_categories=("L", "N", "P", "S", "Zs")),
    min_size=1,
    max_size=24,
)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(any_names, min_size=1, max_size=4, unique=True))
def test_any_tool_names_give_a_grammar_llama_cpp_parses(llama_url: str, names: list[str]) -> None:
    check_grammar(
        llama_url, react_grammar(ReactFormat(tools=tuple((n, ("input",)) for n in names)))
    )


@settings(max_examples=60, deadline=None)
@given(names=st.lists(printable_names, min_size=1, max_size=4, unique=True))
def test_exactly_the_given_tool_names_are_accepted(names: list[str]) -> None:
    spec = ReactFormat(tools=tuple((n, ("x",)) for n in names))
    grammar = react_grammar(spec)
    for name, _ in spec.tools:
        assert grammar_accepts(grammar, f"Thought: t\nAction: {name}[1]")
        wrong = name + "x_"
        if all(other != wrong and not other.startswith(wrong) for other in names):
            assert not grammar_accepts(grammar, f"Thought: t\nAction: {wrong}[1]")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_gbnf_literal_is_printable_ascii(text: str) -> None:
    literal = gbnf_literal(text)
    assert literal.startswith('"') and literal.endswith('"')
    assert all(0x20 <= ord(c) < 0x7F for c in literal)


CALC = ToolSpec(
    name="calculator",
    description="math",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
        "additionalProperties": False,
    },
)
NESTED = ToolSpec(
    name="book",
    description="book a room",
    parameters={
        "type": "object",
        "properties": {"room": {"$ref": "#/$defs/Room"}, "nights": {"type": "integer"}},
        "required": ["room", "nights"],
        "additionalProperties": False,
        "$defs": {
            "Room": {
                "type": "object",
                "properties": {"kind": {"enum": ["a", "b"]}},
                "required": ["kind"],
                "additionalProperties": False,
            }
        },
    },
)


def _native(schema: dict[str, Any], body: dict[str, Any]) -> bool:
    return grammar_accepts(json_schema_grammar(schema), json.dumps(body))


def test_native_schema_accepts_calls_and_answers() -> None:
    schema = tool_call_schema([CALC, NESTED])
    assert _native(
        schema, {"thought": "t", "tool": "calculator", "arguments": {"expression": "1+1"}}
    )
    assert _native(
        schema,
        {"thought": "t", "tool": "book", "arguments": {"room": {"kind": "a"}, "nights": 2}},
    )
    assert _native(schema, {"thought": "t", "answer": "42"})


def test_native_schema_refuses_unknown_tools_and_bad_arguments() -> None:
    schema = tool_call_schema([CALC, NESTED])
    assert not _native(schema, {"thought": "t", "tool": "calc", "arguments": {"expression": "1"}})
    assert not _native(schema, {"thought": "t", "tool": "calculator", "arguments": {"expr": "1"}})
    assert not _native(
        schema,
        {"thought": "t", "tool": "book", "arguments": {"room": {"kind": "c"}, "nights": 2}},
    )


def test_tool_choice_narrows_the_union() -> None:
    answer = {"thought": "t", "answer": "42"}
    call = {"thought": "t", "tool": "calculator", "arguments": {"expression": "1"}}
    assert not _native(tool_call_schema([CALC], "required"), answer)
    assert _native(tool_call_schema([CALC], "required"), call)
    assert not _native(tool_call_schema([CALC], "none"), call)
    assert not _native(tool_call_schema([CALC, NESTED], "book"), call)
