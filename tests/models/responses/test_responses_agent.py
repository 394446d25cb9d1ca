"""Full runs (``Agent.run``) over real HTTP against the fake Responses server on 127.0.0.1.

The fake checks each request as the API does (a ``function_call`` without its output, an
output answering no call, an unknown ``previous_response_id``), so a run that ends with an
answer also shows that every request it sent would have been accepted. Each run goes both
ways, streamed and not: the same script gives the same outcome.
"""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import Agent, Limits, StopReason
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.testing import (
    FakeResponsesServer,
    cut_off_call,
    failed_response,
    function_call,
    reasoning_item,
    refusal,
    response,
    response_stream,
    responses_error,
)
from reactloop.tools.families.calculator import calculator_tool

STREAM = pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])


SLEPT: list[float] = []


def run(server: FakeResponsesServer, stream: bool, **limits: Any) -> Any:
    SLEPT.clear()
    model = OpenAIResponsesModel(
        model="fake", base_url=server.base_url, stream=stream, sleep=SLEPT.append
    )
    agent = Agent(model, [calculator_tool()], limits=Limits(**limits), instructions="Use tools.")
    return agent.run("What is 6*7?")


def calc(expression: str, call_id: str | None = None) -> dict[str, Any]:
    return function_call("calculator", {"expression": expression}, call_id=call_id)


@STREAM
def test_a_tool_call_then_an_answer(stream: bool) -> None:
    script = [response(calls=[calc("6*7")]), response("It is 42.")]
    with FakeResponsesServer(script) as server:
        result = run(server, stream)
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert result.answer == "It is 42."
    second = server.requests[1].json
    assert second["store"] is False
    assert second["instructions"].startswith("Use tools.")
    assert second["input"][-2]["type"] == "function_call"
    output = second["input"][-1]
    assert output["type"] == "function_call_output" and output["call_id"] == "call_0"
    assert output["output"] == '{"ok": true, "output": "42"}'


@STREAM
def test_parallel_calls_and_reasoning_are_echoed(stream: bool) -> None:
    thought = reasoning_item("I should multiply.", encrypted_content="gAAA-secret")
    first = response(reasoning=[thought], calls=[calc("6*7"), calc("1+1")])
    with FakeResponsesServer([first, "42 and 2"]) as server:
        result = run(server, stream)
    assert result.answer == "42 and 2"
    items = server.requests[1].json["input"]
    kinds = [item.get("type", item.get("role")) for item in items]
    assert kinds == [
        "user", "reasoning", "function_call", "function_call", "function_call_output",
        "function_call_output",
    ]  # fmt: skip
    assert items[1]["encrypted_content"] == "gAAA-secret"
    assert [i["call_id"] for i in items[4:]] == ["call_0", "call_1"]


@STREAM
def test_malformed_arguments_and_an_unknown_tool_become_observations(stream: bool) -> None:
    bad = function_call("calculator", '{"expression": "6*', call_id="call_a")
    unknown = function_call("no_such_tool", {}, call_id="call_b")
    with FakeResponsesServer([response(calls=[bad, unknown]), "done"]) as server:
        result = run(server, stream)
    assert result.answer == "done"
    outputs = [
        i for i in server.requests[1].json["input"] if i.get("type") == "function_call_output"
    ]
    assert [o["call_id"] for o in outputs] == ["call_a", "call_b"]
    assert all('"ok": false' in o["output"] for o in outputs)


@STREAM
def test_a_cut_off_call_is_never_run(stream: bool) -> None:
    with FakeResponsesServer([cut_off_call("calculator"), "42"]) as server:
        result = run(server, stream)
    assert result.answer == "42"
    assert result.tool_calls == 0
    second = server.requests[1].json["input"]
    output = next(i for i in second if i.get("type") == "function_call_output")
    assert "not executed" in output["output"] or "cut off" in output["output"]


@STREAM
def test_a_refusal_stops_the_run_with_its_reason(stream: bool) -> None:
    with FakeResponsesServer([refusal("I won't do that.")]) as server:
        result = run(server, stream)
    assert result.stop_reason is StopReason.CONTENT_FILTER
    assert "I won't do that." in (result.error or "")


@STREAM
def test_incomplete_text_is_truncated_not_an_answer(stream: bool) -> None:
    cut = response("It is", status="incomplete", incomplete="max_output_tokens")
    with FakeResponsesServer([cut, cut, cut, cut]) as server:
        result = run(server, stream, max_truncation_retries=1)
    assert result.stop_reason is StopReason.TRUNCATED
    assert result.answer is None


@STREAM
def test_429_with_retry_after_then_500_are_retried(stream: bool) -> None:
    script: list[Any] = [responses_error(429, retry_after=7), responses_error(500), "42"]
    with FakeResponsesServer(script) as server:
        result = run(server, stream, max_seconds=60)
    assert result.answer == "42"
    assert len(server.requests) == 3
    assert SLEPT[0] == 7  # the server's Retry-After, not the policy's backoff


def test_a_failed_response_ends_the_run_with_its_error() -> None:
    failed = failed_response("invalid_prompt", "Your prompt was flagged.")
    with FakeResponsesServer([failed]) as server:
        result = run(server, False, max_model_calls=3)
    assert result.stop_reason is StopReason.MODEL_ERROR
    assert "Your prompt was flagged." in (result.error or "")
    assert len(server.requests) == 1  # invalid_prompt is not worth a retry


def test_a_stream_cut_mid_item_is_retried_never_run() -> None:
    first = response(calls=[calc("6*7")])
    with FakeResponsesServer([response_stream(first, cut_mid_item=True), "42"]) as server:
        result = run(server, True)
    assert result.answer == "42"
    assert result.tool_calls == 0
    assert len(server.requests) == 2
