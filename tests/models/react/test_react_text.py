"""The text ReAct adapter: prompt, rendering, stop sequence, argument mapping."""

from __future__ import annotations

import json

from reactloop import (
    Agent,
    FunctionModel,
    Message,
    ModelRequest,
    ModelTurn,
    ScriptedModel,
    StopReason,
    ToolCall,
    tool,
)
from reactloop.history import History
from reactloop.models.react import ReactTextModel
from reactloop.tools.families.calculator import calculator_tool


def test_system_prompt_for_the_seed_tools_is_short(seed_tools):
    prompt = ReactTextModel(ScriptedModel([])).system_prompt([t.spec for t in seed_tools])
    assert len(prompt) < 900
    for needle in ("calculator[expression]", "lookup[key]", "Finish[answer]", "Observation"):
        assert needle in prompt


def test_requests_carry_the_stop_sequence_and_no_tool_specs(make_agent):
    agent, model = make_agent(["Action: Finish[1]"], protocol="text")
    agent.run("q")
    request = model.requests[0]
    assert tuple(request.stop) == ("Observation:",)
    assert tuple(request.tools) == ()
    assert request.react is not None and not request.react.finish_only
    assert request.react.tools == (("calculator", ("expression",)), ("lookup", ("key",)))


def test_history_is_rendered_as_alternating_chat(make_agent):
    agent, model = make_agent(
        ["Action: lookup[цена_чая]", "Action: calculator[1/0]", "Action: Finish[35]"],
        protocol="text",
    )
    agent.run("q")
    roles = [m.role for m in model.requests[-1].messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user"]
    contents = [m.content for m in model.requests[-1].messages]
    assert contents[3] == "Observation: 35"
    assert contents[5] == "Observation: Error: division by zero"


def test_rendering_is_incremental_and_restarts_for_a_new_run(make_agent):
    agent, model = make_agent(["Action: Finish[1]", "Action: Finish[2]"], protocol="text")
    assert agent.run("first").answer == "1"
    assert agent.run("second").answer == "2"
    second = [m.content for m in model.requests[1].messages]
    assert "second" in second[1] and all("first" not in c for c in second)


def test_multi_parameter_tool_takes_a_json_object():
    @tool
    def convert(amount: float, currency: str) -> str:
        """Convert money."""
        return f"{amount} {currency}"

    model = ScriptedModel(
        [
            'Action: convert[{"amount": 100, "currency": "USD"}]',
            "Action: convert[100 USD]",
            "Action: Finish[done]",
        ]
    )
    result = Agent(model, [convert], protocol="text").run("q")
    tool_messages = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert tool_messages[0] == {"ok": True, "output": "100.0 USD"}
    assert "not valid JSON" in tool_messages[1]["error"]
    assert 'convert[{"amount", "currency"}]' in model.requests[0].messages[0].content


def test_single_parameter_tool_accepts_its_json_object_too(make_agent):
    agent, _ = make_agent(
        ['Action: calculator[{"expression": "2+2"}]', "Action: Finish[4]"], protocol="text"
    )
    result = agent.run("q")
    assert json.loads(next(m for m in result.history if m.role == "tool").content)["output"] == "4"


def test_worked_example_follows_the_inner_models_preference(seed_tools):
    inner = ScriptedModel([])
    specs = [t.spec for t in seed_tools]
    assert "Example:" not in ReactTextModel(inner).system_prompt(specs)
    inner.prefers_worked_example = True  # type: ignore[attr-defined]
    assert "Example:" in ReactTextModel(inner).system_prompt(specs)
    assert "Example:" not in ReactTextModel(inner, worked_example=False).system_prompt(specs)


def test_a_cut_length_reply_is_truncated_not_parsed(make_agent):
    cut = {"content": "Thought: long\nAction: calculator[1+", "finish_reason": "length"}
    agent, _ = make_agent([cut, cut], protocol="text")
    result = agent.run("q")
    assert result.stop_reason is StopReason.TRUNCATED
    assert result.tool_calls == 0


def test_a_rewritten_history_is_rendered_again():
    inner = FunctionModel(lambda request: "Action: Finish[x]", native_tools=False)
    adapter = ReactTextModel(inner)
    history = History([Message(role="user", content="original task")])
    seen = []
    inner.function = lambda request: seen.append(request.messages[1].content) or "Action: Finish[x]"
    adapter.complete(ModelRequest(messages=history))
    history.replace(0, Message(role="user", content="rewritten task"))
    adapter.complete(ModelRequest(messages=history))
    assert seen == ["original task", "rewritten task"]


def test_the_loop_warns_when_the_prefix_was_rewritten():
    def reply(request):
        if request.step == 1:
            request.messages.replace(1, Message(role="user", content="rewritten"))
            return ModelTurn(
                tool_calls=(ToolCall(id="a", name="calculator", arguments='{"expression": "1"}'),)
            )
        return ModelTurn(text="1")

    result = Agent(FunctionModel(reply), [calculator_tool()]).run("task")
    assert result.answer == "1"
    assert any(w.startswith("prefix_changed: message 1") for w in result.warnings)


def test_the_package_exports_one_model_class() -> None:
    import reactloop.models.react as package

    assert package.__all__ == ["ReactTextModel"]
