"""One prepared call per tool call: decoded once and validated once, then read by the budget,
the loop guard, the approver and the executor. The loop reads plain settings, not the Agent."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BeforeValidator

import reactloop
import reactloop.support.json_decode
from reactloop import Agent, Limits, ModelTurn, PreparedCall, ScriptedModel, Tool, ToolCall, tool
from reactloop.loop.model_call import ModelFailure
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.settings import RunSettings
from reactloop.result import Stop

MARK = "decode-me-once"
validated: list[Any] = []


def _count(value: Any) -> Any:
    validated.append(value)
    return value


@tool
def act(n: Annotated[int, BeforeValidator(_count)], note: str = "") -> int:
    """Act on n (a side effect, so the approver is asked)."""
    return n


def test_each_call_is_decoded_once_and_validated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes: list[str] = []
    real_loads, real_json_loads = reactloop.support.json_decode.loads, json.loads

    def counting_loads(text: str) -> Any:
        if MARK in text:
            decodes.append(text)
        return real_loads(text)

    def counting_json_loads(text: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(text, str | bytes) and MARK in str(text):
            decodes.append(str(text))
        return real_json_loads(text, *args, **kwargs)

    monkeypatch.setattr(reactloop.support.json_decode, "loads", counting_loads)
    monkeypatch.setattr(json, "loads", counting_json_loads)
    validated.clear()
    approved: list[PreparedCall] = []

    def approve(call: PreparedCall, tool: Tool) -> bool:
        approved.append(call)
        return True

    arguments = json.dumps({"n": 3, "note": MARK})
    model = ScriptedModel(
        [ModelTurn(tool_calls=(ToolCall(id="a", name="act", arguments=arguments),)), "ok"]
    )
    result = Agent(model, [act], approve=approve).run("q")
    assert result.answer == "ok" and result.tool_calls == 1
    assert len(decodes) == 1, decodes
    assert validated == [3]
    (prepared,) = approved
    assert prepared.arguments == {"n": 3, "note": MARK}
    assert prepared.values == {"n": 3, "note": MARK}
    assert prepared.key == 'act\x00{"n":3,"note":"decode-me-once"}'
    assert (prepared.id, prepared.name, prepared.error) == ("a", "act", None)


def test_a_call_that_cannot_run_is_not_put_to_the_approver() -> None:
    asked: list[Any] = []
    model = ScriptedModel(
        [ModelTurn(tool_calls=(ToolCall(id="a", name="act", arguments='{"n": "x"}'),)), "ok"]
    )
    result = Agent(model, [act], approve=lambda call, tool: asked.append(call) or True).run("q")
    assert asked == []
    assert "invalid arguments: n:" in json.loads(result.history[-2].content)["error"]


def test_the_loop_takes_a_frozen_settings_value_not_the_agent() -> None:
    agent = Agent(ScriptedModel(["4"]), [], limits=Limits(max_model_calls=2), protocol="native")
    settings = agent.settings()
    assert isinstance(settings, RunSettings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.limits = Limits()  # type: ignore[misc]
    assert RunLoop(settings, "q").execute().answer == "4"
    imported = {
        node.module
        for path in Path(reactloop.loop.__file__).parent.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert "reactloop.loop.tool_calls" in imported  # the loop's own files were read
    assert "reactloop.agent" not in imported


def test_stops_and_model_failures_are_named_types() -> None:
    stop = Stop(reactloop.StopReason.FINAL_ANSWER, "4")
    assert (stop.reason, stop.answer, stop.error, stop.forced) == ("final_answer", "4", None, False)
    assert ModelFailure("boom").message == "boom"


def test_the_types_in_agents_signature_are_exported() -> None:
    for name in ("Observer", "Approver", "PreparedCall"):
        assert name in reactloop.__all__
        assert getattr(reactloop, name) is not None
