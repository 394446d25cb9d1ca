"""Wind-down: when one model call is left, tool calls ran out, or the token or dollar budget has
room for one more call, the model is told to answer."""

from __future__ import annotations

import pytest

from reactloop import Agent, FunctionModel, Limits, ModelTurn, StopReason, ToolCall, Usage
from reactloop.usage import Price


def calc(expression: str) -> dict:
    return {"name": "calculator", "arguments": {"expression": expression}}


def test_last_model_call_is_told_to_answer_and_can_answer(make_agent):
    turns = [{"tool_calls": [calc("1+1")]}, {"tool_calls": [calc("2+2")]}, {"content": "4"}]
    agent, model = make_agent(turns, max_model_calls=3)
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "4")
    last = model.requests[2]
    assert last.tool_choice == "none"
    assert last.messages[-1].kind == "wind_down"
    assert "last step" in last.messages[-1].content
    assert [r.tool_choice for r in model.requests[:2]] == ["auto", "auto"]
    assert any(w.startswith("wind_down") for w in result.warnings)


def test_tool_budget_exhausted_mid_turn_refuses_the_rest_then_winds_down(make_agent):
    turns = [{"tool_calls": [calc("1"), calc("2"), calc("3")]}, {"content": "6"}]
    agent, model = make_agent(turns, max_tool_calls=2)
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "6")
    assert result.tool_calls == 2
    tool_messages = [m for m in result.history if m.role == "tool"]
    assert "tool call limit (2)" in tool_messages[2].content
    assert model.requests[1].tool_choice == "none"
    assert "No tool calls are left" in model.requests[1].messages[-1].content


def test_wind_down_can_be_turned_off(make_agent):
    turns = [{"tool_calls": [calc("1+1")]}, {"content": "2"}]
    agent, model = make_agent(turns, max_model_calls=2, wind_down=False)
    result = agent.run("q")
    assert result.answer == "2"
    assert model.requests[1].tool_choice == "auto"
    assert all(m.kind != "wind_down" for m in result.history)


def test_text_protocol_wind_down_asks_for_finish_only(make_agent):
    turns = ["Action: calculator[1+1]", "Action: Finish[2]"]
    agent, model = make_agent(turns, max_model_calls=2, protocol="text")
    result = agent.run("q")
    assert result.answer == "2"
    react = model.requests[1].react
    assert react is not None and react.finish_only is True
    assert "last step" in model.requests[1].messages[-1].content


def answers_only_when_told(request):
    """A model that calls the calculator every step until it is told to answer."""
    usage = Usage(input_tokens=90, output_tokens=10)
    if request.tool_choice == "none":
        return ModelTurn(text="done", usage=usage)
    arguments = f'{{"expression": "{request.step}"}}'
    call = ToolCall(id=f"c{request.step}", name="calculator", arguments=arguments)
    return ModelTurn(tool_calls=(call,), usage=usage)


def test_a_token_budget_with_room_for_one_more_call_winds_down(make_agent):
    tools = make_agent([])[0].toolbox
    limits = Limits(max_tokens=450)
    result = Agent(FunctionModel(answers_only_when_told), tools, limits=limits).run("q")
    # after three calls of 100 tokens, 300 + 2 * 100 > 450: the fourth is the last one
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "done")
    assert result.model_calls == 4 and result.usage.total_tokens == 400


def test_a_dollar_budget_with_room_for_one_more_call_winds_down(make_agent):
    tools = make_agent([])[0].toolbox
    price = Price(input=10_000.0, cached_input=10_000.0, output=10_000.0)  # $1 a call
    limits = Limits(max_cost=3.5)
    agent = Agent(FunctionModel(answers_only_when_told), tools, limits=limits, price=price)
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "done")
    assert result.model_calls == 3 and result.cost == pytest.approx(3.0)


def test_an_answer_given_on_a_wind_down_call_is_marked_forced(make_agent, tmp_path):
    from reactloop import Journal, read_journal

    turns = [{"tool_calls": [calc("1+1")]}, {"tool_calls": [calc("2+2")]}, {"content": "4"}]
    agent, _ = make_agent(turns, max_model_calls=3)
    with Journal(tmp_path / "run.jsonl") as journal:
        agent.journal = journal
        result = agent.run("q")
    assert (result.stop_reason, result.answer, result.forced) == ("final_answer", "4", True)
    assert result.to_dict()["forced"] is True
    (stop,) = [e for e in read_journal(tmp_path / "run.jsonl") if e["type"] == "stop"]
    assert stop["forced"] is True


def test_an_answer_the_model_chose_to_give_is_not_forced(make_agent):
    agent, _ = make_agent([{"tool_calls": [calc("1+1")]}, {"content": "2"}])
    result = agent.run("q")
    assert (result.answer, result.forced) == ("2", False)


def test_the_last_word_after_a_loop_is_marked_forced(make_agent):
    turns = [{"tool_calls": [calc("1+1")]}] * 3 + [{"content": "2"}]
    agent, _ = make_agent(turns)
    result = agent.run("q")
    assert (result.stop_reason, result.answer, result.forced) == ("loop_detected", "2", True)


def test_no_answer_is_never_forced(make_agent):
    turns = [{"tool_calls": [calc("1+1")]}] * 3 + [{"tool_calls": [calc("1+1")]}]
    agent, _ = make_agent(turns)
    result = agent.run("q")
    assert (result.answer, result.forced) == (None, False)
