"""An answer copied from the native prompt's own examples is refused (no model needed)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from reactloop.agent import Agent
from reactloop.journal.writer import Journal, read_journal
from reactloop.limits import Limits
from reactloop.messages import Message, ModelTurn, ToolCall
from reactloop.models.base import ModelRequest
from reactloop.models.local.copy_guard import grounded, refuse_copied_answer, shown_strings
from reactloop.models.local.examples import (
    CALCULATOR,
    EXAMPLES,
    LOOKUP,
    NO_TOOL,
    chosen_examples,
    example_strings,
    normalize,
    parroted,
)
from reactloop.models.local.generation import Generation
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.session import Session
from reactloop.models.local.turns import native_system_prompt
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.families.lookup import lookup_tool
from reactloop.usage import step_quality

SPECS = [tool.spec for tool in [*calculator_tools(), lookup_tool({"a": "1"})]]


def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return []


def _shown_json_strings(prompt: str) -> list[str]:
    """Every string of every JSON object the prompt shows after its tool list."""
    found = []
    for line in prompt.split("\n\n", 1)[1].splitlines():
        body = line.removeprefix("Observation: ")
        if body.startswith("{") and "{...}" not in body:
            found += _leaves(json.loads(body))
        elif line.startswith("Question: "):
            found.append(line.removeprefix("Question: "))
    return found


@pytest.mark.parametrize("specs", [SPECS, SPECS[:1], SPECS[-1:], []])
def test_every_string_the_prompt_shows_is_known_to_the_guard(specs: list[Any]) -> None:
    prompt = native_system_prompt(specs, worked_example=True)
    known = shown_strings(specs, worked_example=True)
    shown = [*_shown_json_strings(prompt), "your reasoning", "TOOL NAME", "the final answer"]
    assert len(shown) > 5
    for string in shown:
        assert normalize(string) in known, string
        assert parroted(string, known) is not None


def test_each_example_answers_with_what_its_own_question_or_observation_holds() -> None:
    # So the guard never refuses an example's answer where it is true: "43" stands after the
    # calculator returned 43. And none answers a newcomer's question ("Paris" was copied).
    tasks = json.loads(Path("benchmarks/newcomer_tasks.json").read_text(encoding="utf-8"))
    questions = {task["question"] for task in tasks["tasks"]}
    for example in EXAMPLES:
        assert example.question not in questions
        answer = example.steps[-1].reply["answer"]
        sources = [example.question] + [s.observation or "" for s in example.steps]
        messages = [Message(role="user", content=source) for source in sources]
        assert grounded(answer, messages, example_strings()), answer
        assert normalize(answer) != "paris"


@pytest.mark.parametrize(
    ("answer", "copied"),
    [
        ("the final answer", "the final answer"),
        (" The lookup returned 4711. ", "the lookup returned 4711"),
        ("43.43.43.43.4", "43"),
        ("An elephant. An elephant. An ele", "an elephant"),
        ("4711", "4711"),
        ("the answer is: 4711", "4711"),
        ("The answer is 1000 - 1 = 999", None),
        ("436", None),
        ("43 apples", None),
        ("Tokyo", None),
    ],
)
def test_parroted_names_the_example_string(answer: str, copied: str | None) -> None:
    known = shown_strings(SPECS, worked_example=True)
    assert parroted(answer, known) in (copied, None)  # a prompt shows only its examples' strings
    assert parroted(answer) == copied  # against every example's strings


def _turn(text: str) -> ModelTurn:
    return ModelTurn(text=text, finish_reason="stop")


def test_an_ungrounded_copy_becomes_a_format_error_and_a_grounded_one_stands() -> None:
    strings = shown_strings(SPECS, worked_example=True)
    france = [Message(role="user", content="What is the capital of France?")]
    refused = refuse_copied_answer(_turn("43"), france, strings)
    assert refused.answer is None
    assert refused.format_error is not None and "copied from an example" in refused.format_error
    assert "43" not in refused.format_error  # a refusal must not ground the next copy
    observed = [
        Message(role="user", content="What is 40 plus 3?"),
        Message(role="tool", content='{"ok": true, "output": "43"}', tool_call_id="c1"),
    ]
    assert refuse_copied_answer(_turn("43"), observed, strings).answer == "43"
    assert refuse_copied_answer(_turn("Paris"), france, strings).answer == "Paris"
    assert not grounded("43", [Message(role="user", content="What is 436 + 1?")], strings)
    notice = Message(role="user", content="Format error: 43", kind="format_error")
    system = Message(role="system", content="Observation: 43")
    assert not grounded("43", [notice, system], strings)


def test_a_tool_error_or_a_copied_call_does_not_ground_a_copy() -> None:
    strings = shown_strings(SPECS, worked_example=True)
    question = Message(role="user", content="Which planet do we live on?")
    error = '{"ok": false, "error": "no note named lookup"}'
    failed = [question, Message(role="tool", content=error, tool_call_id="c1")]
    assert not grounded("lookup", failed, strings)
    copied = ToolCall(id="c2", name="calculator", arguments='{"expression": "6 * 7 + 1"}')
    messages = [
        question,
        Message(role="assistant", tool_calls=(copied,)),
        Message(role="tool", content='{"ok": true, "output": "43"}', tool_call_id="c2"),
    ]
    assert refuse_copied_answer(_turn("43"), messages, strings).answer is None
    own = ToolCall(id="c3", name="calculator", arguments='{"expression": "40 + 3"}')
    messages[1:] = [
        Message(role="assistant", tool_calls=(own,)),
        Message(role="tool", content='{"ok": true, "output": "43"}', tool_call_id="c3"),
    ]
    assert refuse_copied_answer(_turn("43"), messages, strings).answer == "43"


class _ScriptedEngine:
    """A real ``Engine`` in all but the weights: one character per token, replies scripted."""

    name = "scripted"
    chat_template: str | None = None

    def __init__(self, replies: list[Any]) -> None:
        self.bos: list[int] = []
        self.replies = [r if isinstance(r, str) else json.dumps(r) for r in replies]

    def tokenize(self, text: str, special: bool) -> list[int]:
        return [ord(c) for c in text]

    def detokenize(self, tokens: Sequence[int]) -> str:
        return "".join(chr(t) for t in tokens)

    def reusable(self, prompt: Sequence[int]) -> int:
        return 0

    def generate(self, prompt: list[int], **_: Any) -> Generation:
        text = self.replies.pop(0)
        return Generation(text=text, tokens=self.tokenize(text, False), finish_reason="stop")

    def probe(self, prompt: str, max_tokens: int) -> str:
        return ""

    def info(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


class _SessionModel:
    name = "local:scripted"
    native_tools = True
    prefers_worked_example = True  # as the embedded models: the text prompt shows its example

    def __init__(self, replies: list[Any]) -> None:
        self.session = Session(_ScriptedEngine(replies), LocalOptions(n_ctx=8192), self.name)

    def complete(self, request: ModelRequest) -> ModelTurn:
        return self.session.complete(request)


def test_the_loop_asks_again_and_journals_the_refused_copy(tmp_path: Path) -> None:
    model = _SessionModel(
        [
            {"thought": "x", "answer": "43.43.43"},
            {"thought": "x", "answer": "43"},  # the first refusal does not let it through
            {"thought": "I know it.", "answer": "Paris"},
        ]
    )
    journal = Journal(tmp_path / "run.jsonl")
    tools = [*calculator_tools(), lookup_tool({"a": "1"})]
    result = Agent(model, tools, limits=Limits(max_model_calls=4), journal=journal).run(
        "What is the capital of France?"
    )
    journal.close()
    assert result.answer == "Paris"
    assert result.model_calls == 3
    assert step_quality(read_journal(tmp_path / "run.jsonl")).format_errors == 2
    assert "copied from an example" in (tmp_path / "run.jsonl").read_text(encoding="utf-8")


def test_the_text_protocol_refuses_the_example_finish_it_was_shown() -> None:
    model = _SessionModel(
        ["Thought: I know it.\nAction: Finish[43]", "Thought: I know it.\nAction: Finish[Paris]"]
    )
    tools = [*calculator_tools(), lookup_tool({"a": "1"})]
    agent = Agent(model, tools, protocol="text", limits=Limits(max_model_calls=4))
    result = agent.run("What is the capital of France?")
    assert result.answer == "Paris"
    assert result.model_calls == 2


def test_the_text_protocol_keeps_an_answer_its_observation_gave() -> None:
    model = _SessionModel(
        [
            "Thought: compute\nAction: calculator[40 + 3]",
            "Thought: done\nAction: Finish[43]",
        ]
    )
    agent = Agent(model, calculator_tools(), protocol="text", limits=Limits(max_model_calls=4))
    result = agent.run("What is 40 plus 3?")
    assert (result.answer, result.model_calls) == ("43", 2)


def test_a_prompt_shows_its_tools_examples_and_otherwise_the_one_without_a_tool() -> None:
    assert chosen_examples(["calculator"]) == (CALCULATOR,)
    assert chosen_examples(["calculator", "lookup", "bash"]) == (LOOKUP, CALCULATOR)
    assert chosen_examples(["read_file"]) == chosen_examples([]) == (NO_TOOL,)
    assert "Paris" not in native_system_prompt([], worked_example=True)
