"""The embedded models, for real: no answer is a string of the prompt's own examples (issue 37).

Slow (seconds per run); CI runs them with the ``local`` extra installed.
"""

from __future__ import annotations

import os

import pytest

from reactloop.agent import Agent
from reactloop.limits import Limits
from reactloop.models import ModelSettings, resolve_model
from reactloop.models.copy_guard import shown_strings
from reactloop.models.worked_examples import parroted
from reactloop.tools.families.calculator import tools as calculator_tools

if os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1":  # in CI a missing extra must fail
    pytest.importorskip("xllamacpp")
pytestmark = pytest.mark.slow

# The README's first question, and the one every newcomer asks, with the CLI's default tools.
QUESTIONS = ("What is 35 * 12?", "What is the capital of France?")


@pytest.mark.parametrize(
    ("name", "protocol"),
    [("smollm2-135m", "native"), ("gemma3-270m", "native"), ("smollm2-135m", "text")],
)
@pytest.mark.parametrize("question", QUESTIONS)
def test_the_answer_is_not_an_example_string(name: str, protocol: str, question: str) -> None:
    model = resolve_model(f"local:{name}", ModelSettings(seed=0, temperature=0.0))
    tools = calculator_tools()
    agent = Agent(model, tools, protocol=protocol, limits=Limits(max_model_calls=8))  # type: ignore[arg-type]
    result = agent.run(question)
    strings = shown_strings([tool.spec for tool in tools], worked_example=True)
    if (name, protocol) == ("smollm2-135m", "native"):  # the default model answers both
        assert result.answer is not None, result.error
    if result.answer is None:  # Gemma on France: three copies refused, the run ends without one
        assert str(result.stop_reason) == "format_errors", result.error
        assert "copied from an example" in str(result.error) + str(result.history[-1].content)
    else:
        assert parroted(result.answer, strings) is None, result.answer


def test_the_console_shows_the_embedded_models_thought_as_its_reason_and_never_its_json() -> None:
    """``reactloop run`` with the default embedded model, one step without tools: its thought
    is the step's ``Reason`` (not a dim ``thinking:``); with ``--stream`` the thought is
    streamed as the ``Reply``, never the step's raw JSON."""
    from helpers import invoke

    question = ("What is the capital of France?", "--model", "local", "--tools", "none")
    code, out, err = invoke("run", *question, "--no-trace")
    assert code in (0, 3) and out.strip(), err
    assert first_line_of_step_1(err).startswith("  Reason  ") and "thinking:" not in err
    code, out, err = invoke("run", *question, "--no-trace", "--stream")
    assert code in (0, 3) and out.strip(), err
    assert first_line_of_step_1(err).startswith("  Reply   ")
    assert '"thought"' not in err and '{"' not in err


def first_line_of_step_1(err: str) -> str:
    """Step 1's first line but the waiting line's (``waiting for the model: 10 s``)."""
    lines = err.split("Step 1\n")[1].splitlines()
    return next(line for line in lines if "waiting for the model" not in line)
