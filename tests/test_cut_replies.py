"""A reply that finished on ``length`` is never an answer, forced or not (the last word after a
loop included), and the context budget counts what is sent, not only what a provider says."""

from __future__ import annotations

from typing import Any

from reactloop import Agent, Limits, ModelTurn, ScriptedModel, StopReason, ToolCall, tool


@tool(read_only=True)
def look(q: str) -> str:
    """Look something up."""
    return "nothing new"


def loop_then(last: ModelTurn) -> ScriptedModel:
    same = ToolCall(id="", name="look", arguments='{"q": "x"}')
    return ScriptedModel([ModelTurn(tool_calls=(same,))] * 3 + [last])


def test_a_last_word_cut_at_the_token_limit_is_no_answer() -> None:
    cut = ModelTurn(text='{"thought": "t", "answer": "1000', finish_reason="length")
    result = Agent(loop_then(cut), [look], protocol="native").run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.answer is None and not result.forced
    assert "cut off" in (result.error or "")


def test_a_last_word_the_filter_stopped_is_no_answer() -> None:
    stopped = ModelTurn(text="partial", finish_reason="content_filter")
    result = Agent(loop_then(stopped), [look], protocol="native").run("q")
    assert (result.stop_reason, result.answer) == (StopReason.LOOP_DETECTED, None)
    assert "content filter" in (result.error or "")


def test_a_whole_last_word_is_still_the_forced_answer() -> None:
    result = Agent(loop_then(ModelTurn(text="2")), [look], protocol="native").run("q")
    assert (result.stop_reason, result.answer, result.forced) == ("loop_detected", "2", True)


def test_a_wind_down_reply_cut_at_the_token_limit_is_no_answer() -> None:
    calls: list[Any] = [
        {"tool_calls": [{"name": "look", "arguments": {"q": str(i)}}]} for i in range(2)
    ]
    cut: list[Any] = [{"content": "1000", "finish_reason": "length"}] * 2
    limits = Limits(max_model_calls=4, near_repeat_warn=None, near_repeat_stop=None)
    result = Agent(ScriptedModel(calls + cut), [look], limits=limits).run("q")
    assert result.answer is None
    assert result.stop_reason in (StopReason.TRUNCATED, StopReason.MAX_MODEL_CALLS)
