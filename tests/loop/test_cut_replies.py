"""A reply that finished on ``length`` is never an answer, forced or not (the last word after a
loop included), and the context budget counts what is sent, not only what a provider says."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from reactloop import Agent, Event, Limits, ModelTurn, ScriptedModel, StopReason, ToolCall, tool
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer
from reactloop.testing.fake_openai import RecordedRequest
from reactloop.testing.openai_replies import Reply, completion, json_reply, tool_call


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


@tool(read_only=True)
def fetch(page: int) -> str:
    """Fetch one page of the catalogue."""
    return f"page {page}: " + " ".join(f"tea{page}-{i} costs {page * 7 + i}" for i in range(140))


def constant_count(steps: int, sizes: list[int]) -> Callable[[RecordedRequest], Reply]:
    """A server that counts 180 prompt tokens whatever it is sent; one fetch a step."""

    def answer(request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        sizes.append(len(json.dumps(messages)))
        usage = {"prompt_tokens": 180, "completion_tokens": 20}
        step = sum(1 for m in messages if m["role"] == "assistant")
        if step >= steps:
            return json_reply(completion("done", usage=usage))
        calls = [tool_call("fetch", {"page": step}, id=f"call_{step}")]
        return json_reply(completion(None, tool_calls=calls, usage=usage))

    return answer


def test_the_context_budget_counts_what_is_sent_not_a_count_that_is_plainly_wrong() -> None:
    sizes: list[int] = []
    limits = Limits(
        max_model_calls=30, max_tool_calls=30, context_tokens=6000, context_policy="trim"
    )
    with FakeOpenAIServer(responder=constant_count(25, sizes)) as server:
        model = OpenAIChatModel(model="fake", base_url=server.base_url, max_retries=0)
        events: list[Event] = []
        agent = Agent(model, [fetch], limits=limits, observers=[events.append])
        result = agent.run("Find the cheapest tea.")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    pages = sum(len(m.content) for m in result.history if m.role == "tool" and "costs" in m.content)
    assert pages < 25 * len(fetch.function(1)) / 2  # most results were trimmed to a stub
    assert any(e.type == "compaction" for e in events)
    assert max(sizes) < 4 * 6000  # every prompt stayed within the budget (4 characters a token)
