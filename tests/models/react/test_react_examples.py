"""The text ReAct prompt's worked examples are the native prompt's, and an answer copied from
them (or from the format line) is refused on the run's own history (issue 37)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reactloop.agent import Agent
from reactloop.limits import Limits
from reactloop.messages import ToolSpec
from reactloop.models.copy_guard import COPIED_ANSWER, shown_strings
from reactloop.models.react import ReactTextModel
from reactloop.models.react.prompt import system_prompt
from reactloop.models.scripted import ScriptedModel
from reactloop.models.worked_examples import normalize, parroted
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.families.lookup import lookup_tool

TOOLS = [*calculator_tools(), lookup_tool({"tea_price": "35"})]
SPECS = [tool.spec for tool in TOOLS]
EXAMPLE_LINE = re.compile(
    r"^(?:Question|Thought|Observation): (.+)$|^Action: \w+\[(.*)\]$", re.MULTILINE
)


def shown_in(prompt: str) -> list[str]:
    """Every value the prompt's examples show: questions, thoughts, arguments, observations."""
    examples = prompt.split("\n\nExample:\n", 1)[1]
    return [a or b for a, b in EXAMPLE_LINE.findall(examples)]


@pytest.mark.parametrize("specs", [SPECS, SPECS[:1], SPECS[1:], []])
def test_every_string_the_text_prompt_shows_is_known_to_the_guard(specs: list[ToolSpec]) -> None:
    prompt = system_prompt(specs, worked_example=True)
    known = shown_strings(specs, worked_example=True)
    shown = shown_in(prompt)
    assert len(shown) >= 3
    for string in [*shown, "your reasoning", "answer", "argument", "Thought"]:
        assert parroted(string, known) is not None, string


def test_no_text_example_answers_a_newcomers_question() -> None:
    tasks = json.loads(Path("benchmarks/newcomer_tasks.json").read_text(encoding="utf-8"))
    expected = {normalize(e) for task in tasks["tasks"] for e in task["expect"]}
    for specs in (SPECS, SPECS[:1], SPECS[1:], []):
        prompt = system_prompt(specs, worked_example=True)
        answers = re.findall(r"^Action: Finish\[(.+)\]$", prompt, re.MULTILINE)
        assert answers and not {normalize(a) for a in answers} & expected, answers
        assert "Paris" not in prompt and "France" not in prompt


def guarded(turns: list[str]) -> ReactTextModel:
    return ReactTextModel(ScriptedModel(turns), worked_example=True)


def test_copies_of_the_format_are_refused_even_after_a_refusal_that_names_them() -> None:
    # The refusal's own words ("that answer is copied...") must not ground the next "answer".
    model = guarded(
        [
            "Thought: x\nAction: Finish[answer]",
            "Thought: x\nAction: Finish[answer]",
            "Thought: x\nAction: Finish[Thought]",
            "Thought: I know it.\nAction: Finish[Paris]",
        ]
    )
    result = Agent(model, TOOLS, limits=Limits(max_model_calls=5, max_format_errors=4)).run(
        "What is the capital of France?"
    )
    assert (result.answer, result.model_calls) == ("Paris", 4)
    refusals = [m.content for m in result.history if m.kind == "format_error"]
    assert len(refusals) == 3 and all(COPIED_ANSWER in r for r in refusals)


def test_an_example_answer_the_run_observed_stands_and_one_it_did_not_is_refused() -> None:
    observed = guarded(["Thought: c\nAction: calculator[40 + 3]", "Thought: d\nAction: Finish[43]"])
    result = Agent(observed, TOOLS, limits=Limits(max_model_calls=3)).run("What is 40 plus 3?")
    assert (result.answer, result.model_calls) == ("43", 2)
    copied = guarded(["Thought: d\nAction: Finish[4711]"] * 3)
    result = Agent(copied, TOOLS, limits=Limits(max_model_calls=3)).run("What is the door code?")
    assert result.answer is None and str(result.stop_reason) == "format_errors"


def test_without_worked_examples_the_text_adapter_does_not_guard() -> None:
    plain = ReactTextModel(ScriptedModel(["Thought: x\nAction: Finish[43]"]))
    assert "Example:" not in plain.system_prompt(SPECS)
    assert Agent(plain, TOOLS).run("What is 6 times 7, plus 1?").answer == "43"
