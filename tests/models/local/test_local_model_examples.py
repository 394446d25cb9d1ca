"""The embedded models, for real: no answer is a string of the prompt's own examples (issue 37).

Slow (seconds per run); CI runs them with the ``local`` extra installed.
"""

from __future__ import annotations

import os

import pytest

from reactloop.agent import Agent
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.local.copy_guard import shown_strings
from reactloop.models.local.examples import parroted
from reactloop.tools.families.calculator import tools as calculator_tools

if os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1":  # in CI a missing extra must fail
    pytest.importorskip("xllamacpp")
pytestmark = pytest.mark.slow

# The README's first question, and the one every newcomer asks, with the CLI's default tools.
QUESTIONS = ("What is 35 * 12?", "What is the capital of France?")


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_the_answer_is_not_an_example_string(name: str, question: str) -> None:
    model = resolve_model(f"local:{name}", ModelSettings(seed=0, temperature=0.0))
    tools = calculator_tools()
    result = Agent(model, tools, limits=Limits(max_model_calls=8)).run(question)
    strings = shown_strings([tool.spec for tool in tools], worked_example=True)
    if name == "smollm2-135m":  # the default model answers both
        assert result.answer is not None, result.error
    if result.answer is None:  # Gemma on France: three copies refused, the run ends without one
        assert str(result.stop_reason) == "format_errors", result.error
        assert "copied from an example" in str(result.error) + str(result.history[-1].content)
    else:
        assert parroted(result.answer, strings) is None, result.answer
