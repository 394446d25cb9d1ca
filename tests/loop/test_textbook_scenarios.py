"""The eight scenarios of the textbook loop (the tea question and its failure modes), driven by a
scripted model over text ReAct."""

from __future__ import annotations

import json

from reactloop import StopReason, tool


def tool_messages(result):
    return [m for m in result.history if m.role == "tool"]


def test_tea_question_in_four_steps(make_agent):
    agent, _ = make_agent(
        [
            "Thought: The price first.\nAction: lookup[цена_чая]",
            "Thought: Now the guests.\nAction: lookup[число_гостей]",
            "Thought: Multiply.\nAction: calculator[35 * 12]",
            "Thought: Done.\nAction: Finish[420]",
        ]
    )
    result = agent.run("Сколько стоит чай на всех гостей?")
    assert result.answer == "420"
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert (result.model_calls, result.tool_calls) == (4, 3)
    outputs = [json.loads(m.content)["output"] for m in tool_messages(result)]
    assert outputs == ["35", "12", "420"]


def test_unknown_tool_becomes_an_observation_listing_the_tools(make_agent):
    agent, model = make_agent(
        ["Thought: search it.\nAction: search[tea price]", "Thought: ok.\nAction: Finish[unknown]"]
    )
    result = agent.run("q")
    observation = json.loads(tool_messages(result)[0].content)
    assert observation["ok"] is False
    assert "unknown tool 'search'" in observation["error"]
    assert "calculator" in observation["error"] and "lookup" in observation["error"]
    assert "Observation: Error: unknown tool" in model.requests[1].messages[-1].content
    assert result.answer == "unknown"


def test_reply_without_action_is_a_format_error_observation(make_agent):
    agent, model = make_agent(["I think the answer is 420.", "Thought: fix.\nAction: Finish[420]"])
    result = agent.run("q")
    assert result.answer == "420"
    notice = model.requests[1].messages[-1].content
    assert notice.startswith("Observation: Format error:")
    assert any("format_error" in w for w in result.warnings)


def test_fabricated_observation_never_reaches_the_history(make_agent):
    agent, model = make_agent(
        [
            "Thought: price.\nAction: lookup[цена_чая]\nObservation: 50\nThought: so 50*12",
            "Thought: done.\nAction: Finish[35]",
        ]
    )
    result = agent.run("q")
    assistant = next(m for m in result.history if m.role == "assistant")
    assert "50" not in assistant.content and "Observation" not in assistant.content
    assert json.loads(tool_messages(result)[0].content)["output"] == "35"
    rendered = "\n".join(m.content for m in model.requests[1].messages)
    assert "Observation: 50" not in rendered and "Observation: 35" in rendered


def test_going_round_in_circles_is_stopped(make_agent):
    circle = "Thought: again.\nAction: lookup[цена_чая]"
    agent, _ = make_agent([circle] * 6)
    result = agent.run("q")
    assert result.stop_reason is StopReason.LOOP_DETECTED
    assert result.answer is None
    assert result.tool_calls == 1  # the repeats were never run
    second = json.loads(tool_messages(result)[1].content)
    assert "already called lookup" in second["error"] and "35" in second["error"]


def test_a_tool_that_raises_becomes_an_observation(make_agent):
    @tool
    def flaky(x: str) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    agent, _ = make_agent(
        ["Action: flaky[1]", "Thought: it failed.\nAction: Finish[gave up]"], tools=[flaky]
    )
    result = agent.run("q")
    observation = json.loads(tool_messages(result)[0].content)
    assert observation == {"ok": False, "error": "RuntimeError: disk on fire"}
    assert result.answer == "gave up"


def test_brackets_inside_the_argument(make_agent):
    agent, _ = make_agent(["Action: calculator[(2+3)*4]", "Action: Finish[20]"])
    result = agent.run("q")
    assert json.loads(tool_messages(result)[0].content)["output"] == "20"


def test_finish_in_lower_case(make_agent):
    agent, _ = make_agent(["Thought: easy.\nAction: finish[42]"])
    result = agent.run("q")
    assert result.answer == "42"
    assert result.stop_reason is StopReason.FINAL_ANSWER
