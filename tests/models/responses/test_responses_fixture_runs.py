"""Every recorded Responses file, served by the fake server, drives a full ``Agent.run`` through
the real adapter (streamed files with ``stream``): the run ends with the stop its reply means,
its calls run only when the reply finished with them, and a run's journal replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, StopReason, tool
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.replay import replay
from reactloop.testing import (
    FakeResponsesServer,
    function_call,
    response,
    responses_fixture_replies,
)
from reactloop.tools.families.calculator import calculator_tool

WIRE = Path(__file__).resolve().parents[2] / "wire_formats" / "responses"
RAN: list[str] = []


@tool(read_only=True)
def get_weather(location: str) -> str:
    """Current weather for a place.

    Args:
        location: the place
    """
    RAN.append(location)
    return "18 C"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: where
        content: what
    """
    RAN.append(path)
    return "written"


STOPS = {
    "openai_text": StopReason.FINAL_ANSWER,
    "openai_function_call": StopReason.FINAL_ANSWER,
    "openai_parallel_function_calls": StopReason.FINAL_ANSWER,
    "openai_reasoning_function_call": StopReason.FINAL_ANSWER,
    "openai_reasoning_text": StopReason.FINAL_ANSWER,
    "openai_refusal": StopReason.CONTENT_FILTER,
    "openai_incomplete_max_output_tokens": StopReason.FINAL_ANSWER,  # asked again: answered
    "openai_incomplete_text": StopReason.FINAL_ANSWER,
    "openai_incomplete_content_filter": StopReason.CONTENT_FILTER,
    "openai_failed": StopReason.MODEL_ERROR,
    "openai_stream_function_call": StopReason.FINAL_ANSWER,
    "openai_stream_parallel_function_calls": StopReason.FINAL_ANSWER,
    "openai_stream_reasoning_function_call": StopReason.FINAL_ANSWER,
    "openai_stream_incomplete_function_call": StopReason.FINAL_ANSWER,
    "openai_stream_refusal": StopReason.CONTENT_FILTER,
    "openai_stream_text": StopReason.FINAL_ANSWER,
    "openai_stream_error_midstream": StopReason.MODEL_ERROR,
    "openai_stream_failed": StopReason.MODEL_ERROR,
    "llamacpp_text": StopReason.FINAL_ANSWER,
    "llamacpp_after_function_call_output": StopReason.FINAL_ANSWER,
    "llamacpp_cut_at_max_output_tokens": StopReason.FINAL_ANSWER,
    "llamacpp_stream_after_function_call_output": StopReason.FINAL_ANSWER,
}
RUNS_CALLS = {
    "openai_function_call", "openai_parallel_function_calls", "openai_reasoning_function_call",
    "openai_stream_function_call", "openai_stream_parallel_function_calls",
    "openai_stream_reasoning_function_call",
}  # fmt: skip


def test_every_reply_fixture_has_its_expected_stop() -> None:
    replies = {p.stem for p in WIRE.iterdir() if not p.name.startswith("error_")}
    assert replies == set(STOPS)


@pytest.mark.parametrize("name", sorted(STOPS))
def test_a_fixture_drives_a_full_run(name: str) -> None:
    path = next(WIRE.glob(f"{name}.*"))
    RAN.clear()
    failing = STOPS[name] is StopReason.MODEL_ERROR
    script: list[Any] = responses_fixture_replies(path) * (3 if failing else 1)
    with FakeResponsesServer([*script, "Done."], check_requests=not failing) as server:
        model = OpenAIResponsesModel(
            model="fake", base_url=server.base_url, stream=path.suffix != ".json",
            sleep=lambda seconds: None,
        )  # fmt: skip
        tools = [get_weather, write_file, calculator_tool()]
        result = Agent(model, tools, limits=Limits(max_model_calls=4)).run("Weather in Paris?")
    assert result.stop_reason is STOPS[name], result.error
    assert bool(RAN) is (name in RUNS_CALLS)


def test_a_responses_run_replays_identically(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    call = function_call("calculator", {"expression": "6*7"})
    with FakeResponsesServer([response(calls=[call]), "42"]) as server, Journal(trace) as journal:
        model = OpenAIResponsesModel(model="fake", base_url=server.base_url)
        assert Agent(model, [calculator_tool()], journal=journal).run("6*7?").answer == "42"
    report = replay(trace, tools=[calculator_tool()])
    assert report.identical and report.compared == 1
    assert report.result is not None and report.result.answer == "42"
