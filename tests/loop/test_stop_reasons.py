"""Every stop reason, each reached the way a real run would reach it."""

from __future__ import annotations

import json

import pytest

from reactloop import (
    Agent,
    FunctionModel,
    Limits,
    ModelError,
    ModelTurn,
    ScriptedModel,
    StopReason,
    ToolCall,
    Usage,
    tool,
)


def calc(expression: str) -> dict:
    return {"name": "calculator", "arguments": {"expression": expression}}


def test_final_answer(make_agent):
    agent, _ = make_agent([{"tool_calls": [calc("1+1")]}, {"content": "2"}])
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "2")


def test_max_model_calls_when_the_model_never_answers(make_agent):
    turns = [{"tool_calls": [calc(f"{i}+1")]} for i in range(10)]
    agent, model = make_agent(turns, max_model_calls=3)
    result = agent.run("q")
    assert result.stop_reason is StopReason.MAX_MODEL_CALLS
    assert result.model_calls == 3
    assert result.tool_calls == 2  # the calls of the last turn were not run: no one would read them
    assert model.requests[2].tool_choice == "none"


def test_max_tool_calls(make_agent):
    turns = [{"tool_calls": [calc(f"{i}+1")]} for i in range(10)]
    agent, model = make_agent(turns, max_tool_calls=2)
    result = agent.run("q")
    assert result.stop_reason is StopReason.MAX_TOOL_CALLS
    assert result.tool_calls == 2
    assert model.requests[2].tool_choice == "none"


def test_max_tokens(make_agent):
    usage = {"input_tokens": 600, "output_tokens": 10}
    turns = [{"tool_calls": [calc(f"{i}+1")], "usage": usage} for i in range(5)]
    agent, _ = make_agent(turns, max_tokens=1000)
    result = agent.run("q")
    assert result.stop_reason is StopReason.MAX_TOKENS
    assert result.model_calls == 2
    assert result.usage.total_tokens == 1220


def test_timeout(make_agent, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr("reactloop.loop.budget.time.monotonic", lambda: now[0])

    def slow_model(request):
        now[0] += 30.0
        return ModelTurn(
            tool_calls=(
                ToolCall(id=f"c{request.step}", name="calculator", arguments='{"expression": "1"}'),
            )
        )

    agent = Agent(
        FunctionModel(slow_model), make_agent([])[0].toolbox, limits=Limits(max_seconds=50)
    )
    result = agent.run("q")
    assert result.stop_reason is StopReason.TIMEOUT
    assert result.model_calls == 2


def test_a_model_call_failing_because_the_time_ran_out_is_a_timeout(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr("reactloop.loop.budget.time.monotonic", lambda: now[0])

    def out_of_time(request):
        now[0] += request.timeout + 1.0
        raise ModelError("openai:m: no complete reply in the 50 s left in the run")

    result = Agent(FunctionModel(out_of_time), [], limits=Limits(max_seconds=50)).run("q")
    assert result.stop_reason is StopReason.TIMEOUT
    assert result.error == "openai:m: no complete reply in the 50 s left in the run"


def test_loop_detected(make_agent):
    agent, _ = make_agent([{"tool_calls": [calc("2*2")]}] * 5)
    result = agent.run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert "3 times" in (result.error or "")


def test_format_errors_three_in_a_row(make_agent):
    agent, _ = make_agent(["no idea", "still none", "nope", "Action: Finish[x]"], protocol="text")
    result = agent.run("q")
    assert result.stop_reason is StopReason.FORMAT_ERRORS
    assert result.model_calls == 3


def test_format_error_counter_resets_after_a_good_step(make_agent):
    turns = ["bad", "bad", "Action: calculator[1+1]", "bad", "bad", "Action: Finish[2]"]
    agent, _ = make_agent(turns, protocol="text")
    assert agent.run("q").answer == "2"


def test_empty_native_reply_is_an_error_not_an_answer(make_agent):
    agent, model = make_agent([{"content": "  "}, {"tool_calls": [calc("1")]}, {"content": "1"}])
    result = agent.run("q")
    assert result.answer == "1"
    assert "empty" in model.requests[1].messages[-1].content


def test_model_error_from_the_provider(make_agent):
    def failing(request):
        raise ModelError("HTTP 402: Insufficient Balance")

    agent = Agent(FunctionModel(failing), [])
    result = agent.run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert result.error == "HTTP 402: Insufficient Balance"
    assert result.model_calls == 1


def test_an_adapter_bug_is_a_model_error_not_a_crash():
    def buggy(request):
        return {}["missing"]

    result = Agent(FunctionModel(buggy), []).run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "KeyError" in (result.error or "")


def test_scripted_model_running_out_is_a_model_error(make_agent):
    agent, _ = make_agent([{"tool_calls": [calc("1")]}])
    result = agent.run("q")
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "no more turns" in (result.error or "")


def test_truncated_reply_gets_one_retry_then_stops(make_agent):
    cut = {
        "tool_calls": [{"name": "calculator", "arguments": '{"expression": "1+'}],
        "finish_reason": "length",
    }
    agent, model = make_agent([cut, cut, {"content": "never"}])
    result = agent.run("q")
    assert result.stop_reason is StopReason.TRUNCATED
    assert result.tool_calls == 0  # a cut-off call is never run
    assert "cut off" in model.requests[1].messages[-1].content


def test_truncated_then_shorter_reply_succeeds(make_agent):
    cut = {"content": "a very long answer that was cu", "finish_reason": "length"}
    agent, _ = make_agent([cut, {"content": "short answer"}], protocol="native")
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.FINAL_ANSWER, "short answer")


def test_content_filter(make_agent):
    agent, _ = make_agent([{"content": "", "finish_reason": "content_filter"}], protocol="native")
    assert agent.run("q").stop_reason is StopReason.CONTENT_FILTER


def test_ctrl_c_in_a_tool_is_cancelled_with_the_history_kept():
    @tool
    def interrupt() -> str:
        """Simulates Ctrl-C."""
        raise KeyboardInterrupt

    model = ScriptedModel([{"tool_calls": [{"name": "interrupt"}]}, {"content": "x"}])
    result = Agent(model, [interrupt]).run("q")
    assert result.stop_reason is StopReason.CANCELLED
    assert result.answer is None
    # The interrupted call is answered, so the history is valid for a provider.
    assert [m.role for m in result.history] == ["system", "user", "assistant", "tool"]
    assert "cancelled" in json.loads(result.history[-1].content)["error"]


def test_cancel_from_another_thread_stops_at_the_next_step(make_agent):
    agent_holder = []

    def model(request):
        agent_holder[0].cancel()
        return ModelTurn(
            tool_calls=(ToolCall(id="a", name="calculator", arguments='{"expression": "1"}'),)
        )

    agent = Agent(FunctionModel(model), make_agent([])[0].toolbox)
    agent_holder.append(agent)
    result = agent.run("q")
    assert result.stop_reason is StopReason.CANCELLED
    assert result.tool_calls == 1


@pytest.mark.parametrize("reason", list(StopReason))
def test_every_stop_reason_is_a_plain_string(reason):
    assert str(reason) == reason.value


def test_usage_is_summed_over_calls(make_agent):
    usage = {"input_tokens": 100, "output_tokens": 5, "cached_tokens": 40}
    agent, _ = make_agent(
        [{"tool_calls": [calc("1")], "usage": usage}, {"content": "1", "usage": usage}]
    )
    result = agent.run("q")
    assert result.usage == Usage(input_tokens=200, output_tokens=10, cached_tokens=80)


def test_max_cost(make_agent):
    from reactloop.usage import Price

    usage = {"input_tokens": 1_000_000, "output_tokens": 0}
    turns = [{"tool_calls": [calc(f"{i}+1")], "usage": usage} for i in range(5)]
    model = ScriptedModel(turns)
    price = Price(input=1.0, cached_input=0.1, output=4.0)
    tools = make_agent([])[0].toolbox
    agent = Agent(model, tools, limits=Limits(max_cost=2.5), price=price)
    result = agent.run("q")
    assert result.stop_reason is StopReason.MAX_COST
    assert result.model_calls == 3
    assert result.cost == pytest.approx(3.0)


def test_max_cost_without_a_price_is_refused(make_agent):
    with pytest.raises(ValueError, match="price"):
        Agent(ScriptedModel([]), [], limits=Limits(max_cost=1.0))


def test_a_loop_still_gets_one_chance_to_answer(make_agent):
    agent, model = make_agent([{"tool_calls": [calc("2*2")]}] * 3 + [{"content": "4"}])
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.LOOP_DETECTED, "4")
    assert result.tool_calls == 1
    last = model.requests[-1]
    assert last.tool_choice == "none" and "repeating" in last.messages[-1].content


def test_no_last_word_when_the_budget_is_spent(make_agent):
    turn = {"tool_calls": [calc("2*2")], "usage": {"input_tokens": 100}}
    agent, model = make_agent([turn] * 3 + [{"content": "4"}], max_tokens=250)
    result = agent.run("q")
    assert (result.stop_reason, result.answer) == (StopReason.LOOP_DETECTED, None)
    assert len(model.requests) == 3


def test_a_broken_observer_is_dropped_and_the_run_goes_on(make_agent):
    seen = []

    def broken(event):
        seen.append(event.type)
        raise OSError("disk full")

    model = ScriptedModel([{"tool_calls": [calc("1+1")]}, {"content": "2"}])
    agent = Agent(model, make_agent([])[0].toolbox, observers=[broken])
    result = agent.run("q")
    assert result.answer == "2"
    assert seen == ["run_start"]
    assert any(w.startswith("observer_failed") and "disk full" in w for w in result.warnings)


def test_a_failing_approver_declines_instead_of_crashing():
    @tool
    def write(text: str) -> str:
        """A side effect."""
        return text

    def approver(call, tool):
        raise RuntimeError("no terminal")

    model = ScriptedModel(
        [{"tool_calls": [{"name": "write", "arguments": {"text": "x"}}]}, {"content": "gave up"}]
    )
    result = Agent(model, [write], approve=approver).run("q")
    assert result.answer == "gave up" and result.tool_calls == 0
    declined = next(m for m in result.history if m.role == "tool")
    assert "approval check failed (RuntimeError: no terminal)" in declined.content
