"""Recovering tool calls left in the text: every raw output of the shared fixtures, and more."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.models.openai.hermes import extract_tool_calls, has_tool_call_markup

WIRE_FORMATS = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[2] / "wire_formats"
)
TEMPLATE = json.loads((WIRE_FORMATS / "qwen_hermes_tool_template.json").read_text())
RAW_OUTPUTS: dict[str, str] = TEMPLATE["raw_model_outputs"]
PARIS = ("get_weather", '{"location": "Paris, France"}')

EXPECTED: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "single_call": ("", [PARIS]),
    "text_then_call": ("Let me look that up.", [PARIS]),
    "qwen3_thinking_then_call": (
        "<think>\nThe user wants the weather in Paris.\n</think>",
        [PARIS],
    ),
    "malformed_python_dict_args": ("", [PARIS]),
    "malformed_arguments_as_string": ("", [PARIS]),
    "truncated_at_max_tokens": (RAW_OUTPUTS["truncated_at_max_tokens"], []),
    "wrong_tag": ("", [PARIS]),
    "hermes2pro_template_tool_turn": (RAW_OUTPUTS["hermes2pro_template_tool_turn"], []),
    "qwen3_coder_xml_call": ("", [PARIS]),
}


def test_every_raw_output_of_the_fixture_has_an_expectation() -> None:
    assert set(RAW_OUTPUTS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_raw_output(name: str) -> None:
    assert extract_tool_calls(RAW_OUTPUTS[name]) == EXPECTED[name]


def test_vllm_unparsed_tool_call_content() -> None:
    body = json.loads((WIRE_FORMATS / "vllm_hermes_unparsed_tool_call.json").read_text())
    assert extract_tool_calls(body["choices"][0]["message"]["content"]) == ("", [PARIS])


def test_two_calls_in_the_rendered_prompt_come_back_in_order() -> None:
    _, calls = extract_tool_calls(TEMPLATE["rendered_prompt"])
    assert calls == [PARIS, ("get_weather", '{"location": "Rome, Italy"}')]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n'
            '<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>',
            ("", [("a", "{}"), ("b", '{"x": 1}')]),
            id="two-blocks",
        ),
        pytest.param(
            'before <tool_call>{"name": "a"}</tool_call> between '
            '<tool_call>{"name": "b"}</tool_call> after',
            ("before  between  after", [("a", "{}"), ("b", "{}")]),
            id="text-around-and-between",
        ),
        pytest.param(
            '<tool_call>{"name": "a", "arguments": {"q": 1}}',
            ("", [("a", '{"q": 1}')]),
            id="closing-tag-eaten-by-stop-sequence",
        ),
        pytest.param(
            '<tool_call>{"name": "a"}\n<tool_call>{"name": "b"}</tool_call>',
            ("", [("a", "{}"), ("b", "{}")]),
            id="first-block-unclosed",
        ),
        pytest.param(
            '<tool_call>[{"name": "a"}, {"name": "b", "parameters": {"q": "x"}}]</tool_call>',
            ("", [("a", "{}"), ("b", '{"q": "x"}')]),
            id="list-of-calls-and-parameters-key",
        ),
        pytest.param(
            '<tool_call>\n{"name": "a"}\n{"name": "b"}\n</tool_call>',
            ("", [("a", "{}"), ("b", "{}")]),
            id="two-objects-in-one-block",
        ),
        pytest.param(
            '<tool_call>{"type": "function", "function": {"name": "a", "arguments": "{}"}}'
            "</tool_call>",
            ("", [("a", "{}")]),
            id="openai-shaped-call",
        ),
        pytest.param(
            '<TOOL_CALL>{"name": "a"}</TOOL_CALL>',
            ("", [("a", "{}")]),
            id="upper-case-tag",
        ),
        pytest.param(
            '<tool_call>{"name": "a"}</tools>',
            ("", [("a", "{}")]),
            id="mismatched-closing-tag",
        ),
        pytest.param(
            'Sure. <function=search>{"query": "x"}</function>',
            ("Sure.", [("search", '{"query": "x"}')]),
            id="llama-style-function-json",
        ),
        pytest.param(
            "<function=f>\n<parameter=items>\n[1, 2]\n</parameter>\n"
            "<parameter=n>\n3\n</parameter>\n<parameter=note>\nline one\nline two\n</parameter>\n"
            "</function>",
            ("", [("f", '{"items": [1, 2], "n": "3", "note": "line one\\nline two"}')]),
            id="coder-xml-unwrapped-multiline",
        ),
        pytest.param(
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n<parameter=b>\ny\n</function>\n"
            "</tool_call>",
            ("", [("f", '{"a": "x", "b": "y"}')]),
            id="coder-xml-missing-parameter-close",
        ),
        pytest.param(
            "<tool_call>\n<function=f>\n</function>\n<function=g>\n<parameter=p>\n1\n</parameter>"
            "\n</function>\n</tool_call>",
            ("", [("f", "{}"), ("g", '{"p": "1"}')]),
            id="coder-xml-two-functions",
        ),
        pytest.param(
            '<think>maybe <tool_call>{"name": "a"}</tool_call></think>Done.',
            ('<think>maybe <tool_call>{"name": "a"}</tool_call></think>Done.', []),
            id="call-inside-thinking-is-not-a-call",
        ),
        pytest.param(
            'I plan to call a</think>\n<tool_call>{"name": "a"}</tool_call>',
            ("I plan to call a</think>", [("a", "{}")]),
            id="thinking-opened-in-the-prompt",
        ),
        pytest.param(
            '<think>never closed <tool_call>{"name": "a"}</tool_call>',
            ('<think>never closed <tool_call>{"name": "a"}</tool_call>', []),
            id="unclosed-thinking",
        ),
        pytest.param(
            '<think>I might use <tool_call> here</think>\n<tool_call>{"name": "a"}</tool_call>',
            ("<think>I might use <tool_call> here</think>", [("a", "{}")]),
            id="unclosed-tag-mentioned-in-thinking",
        ),
        pytest.param(
            '<tool_call>{"name": "a", "arguments": {"s": "</think>"}}</tool_call>',
            ("", [("a", '{"s": "</think>"}')]),
            id="think-close-inside-arguments",
        ),
        pytest.param(
            '<tool_call>{"name": "a", "arguments": {"s": "<think>"}}</tool_call>',
            ("", [("a", '{"s": "<think>"}')]),
            id="think-open-inside-arguments",
        ),
    ],
)
def test_recovered(content: str, expected: tuple[str, list[tuple[str, str]]]) -> None:
    assert extract_tool_calls(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("No tools needed: the answer is 4.", id="plain-text"),
        pytest.param("Use the <tool_call> tag like this.", id="tag-mentioned"),
        pytest.param('<tool_call>{"arguments": {"x": 1}}</tool_call>', id="no-name"),
        pytest.param('<tool_call>{"name": ""}</tool_call>', id="empty-name"),
        pytest.param('<tool_call>{"name": "a", "arguments": "Paris"}</tool_call>', id="args-str"),
        pytest.param('<tool_call>{"name": "a", "arguments": [1, 2]}</tool_call>', id="args-list"),
        pytest.param("<tool_call>{'name': 'a', 'arguments': {1, 2}}</tool_call>", id="py-set"),
        pytest.param("<tool_call>{'name': __import__('os').getcwd()}</tool_call>", id="code"),
        pytest.param("<tool_call>not json at all</tool_call>", id="not-json"),
        pytest.param("<function=f>\n<parameter=a>\ncut off", id="xml-truncated"),
        pytest.param(
            '<tools>\n{"type": "function", "function": {"name": "get_weather", '
            '"description": "Weather", "parameters": {"type": "object"}}}\n</tools>',
            id="tool-definition-echoed-from-the-prompt",
        ),
    ],
)
def test_not_a_call_leaves_the_text_exactly(content: str) -> None:
    assert extract_tool_calls(content) == (content, [])


def test_python_literals_are_read_without_evaluating_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    content = (
        f"<tool_call>{{'name': 'a', 'arguments': {{'p': open({str(marker)!r}, 'w')}}}}</tool_call>"
    )
    assert extract_tool_calls(content) == (content, [])
    assert not marker.exists()


def test_python_true_none_become_json() -> None:
    content = "<tool_call>{'name': 'a', 'arguments': {'flag': True, 'x': None}}</tool_call>"
    assert extract_tool_calls(content) == ("", [("a", '{"flag": true, "x": null}')])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("plain", False),
        ("<tool_call>", True),
        ("x <tools>", True),
        ("<function=f>", True),
        ("<Function_Call>", True),
        ("<tool_response>", False),
    ],
)
def test_has_tool_call_markup(content: str, expected: bool) -> None:
    assert has_tool_call_markup(content) is expected


# --- properties ---------------------------------------------------------------------------

tags = st.sampled_from(["tool_call", "tools", "function_call", "<", ">", "/", "=", "think"])
pieces = st.one_of(
    st.text(max_size=12),
    tags.map(lambda t: f"<{t}>"),
    tags.map(lambda t: f"</{t}>"),
    st.sampled_from(
        ['{"name": "a"', '"arguments": {', "}", "{'name': 'b'}", "<function=f>", "</function>",
         "<parameter=p>", "</parameter>", "[", "]", '"', "\\", "\n", "{{{{", "((((("]
    ),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(pieces, max_size=20))
def test_arbitrary_text_never_raises_and_keeps_the_contract(parts: list[str]) -> None:
    content = "".join(parts)
    text, calls = extract_tool_calls(content)
    if not calls:
        assert text == content
    for name, arguments in calls:
        assert name and name == name.strip()
        assert isinstance(json.loads(arguments), dict)


@settings(max_examples=200, deadline=None)
@given(content=st.text(max_size=300))
def test_any_unicode_text_never_raises(content: str) -> None:
    text, calls = extract_tool_calls(content)
    assert isinstance(text, str) and isinstance(calls, list)


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
arguments_objects = st.dictionaries(
    st.text(max_size=8),
    st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=5),
    max_size=4,
)
safe_text = st.text(st.characters(blacklist_characters="<"), max_size=30)
names = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(
    before=safe_text,
    after=safe_text,
    name=names,
    arguments=arguments_objects,
    encoding=st.sampled_from(["object", "string", "python"]),
)
def test_written_calls_are_recovered_exactly(
    before: str, after: str, name: str, arguments: dict[str, Any], encoding: str
) -> None:
    if encoding == "object":
        block = json.dumps({"name": name, "arguments": arguments})
    elif encoding == "string":
        block = json.dumps({"name": name, "arguments": json.dumps(arguments)})
    else:
        block = repr({"name": name, "arguments": arguments})
    text, calls = extract_tool_calls(f"{before}<tool_call>\n{block}\n</tool_call>{after}")
    assert text == (before + after).strip()
    assert [(n, json.loads(a)) for n, a in calls] == [(name, arguments)]


@settings(max_examples=150, deadline=None)
@given(
    name=names,
    parameters=st.dictionaries(
        names, st.text(st.characters(blacklist_characters="<"), max_size=20), max_size=4
    ),
)
def test_coder_xml_calls_are_recovered(name: str, parameters: dict[str, str]) -> None:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in parameters.items())
    content = f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"
    _, calls = extract_tool_calls(content)
    assert len(calls) == 1
    recovered = json.loads(calls[0][1])
    for key, value in parameters.items():
        expected = value if not value.strip().startswith(("{", "[")) else recovered[key]
        assert recovered[key] == expected
