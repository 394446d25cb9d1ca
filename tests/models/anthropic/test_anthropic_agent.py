"""Full runs (``Agent.run``) over real HTTP against the fake Anthropic server on 127.0.0.1.

The fake checks every request the way the API does (a ``tool_use`` without its
``tool_result``, a thinking block whose signature changed, …), so a run that gets an answer
also shows that each request it sent would have been accepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import add
from reactloop import Agent, Event, Journal, Limits, RunResult, StopReason, ToolError, tool
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.sse import iter_sse_events
from reactloop.replay import replay
from reactloop.testing import FakeOpenAIServer, completion
from reactloop.testing import tool_call as openai_call
from reactloop.testing.anthropic_replies import (
    anthropic_fixture_replies,
    message,
    tool_use,
)
from reactloop.testing.fake_anthropic import FakeAnthropicServer

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
FILES = {"src/foo.txt": "hello from foo\n"}


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a UTF-8 text file.

    Args:
        path: the file
    """
    if path not in FILES:
        raise ToolError(f"FileNotFoundError: {path} does not exist")
    return FILES[path]


@tool(read_only=True)
def get_time() -> str:
    """The time now."""
    return "12:00"


TOOLS = [read_file, get_time, add]


def fixture(name: str) -> Any:
    return anthropic_fixture_replies(WIRE / name)[0]


def events_of(name: str) -> list[dict[str, Any]]:
    text = (WIRE / name).read_text()
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(event.data) for event in iter_sse_events(text)]


def run(
    script: list[Any], *, task: str = "Read src/foo.txt and src/bar.txt", **options: Any
) -> tuple[RunResult, FakeAnthropicServer, list[float]]:
    sleeps: list[float] = []
    limits = options.pop("limits", Limits())
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel(
            model="claude-test", base_url=server.base_url, sleep=sleeps.append, **options
        )
        result = Agent(model, TOOLS, limits=limits, instructions="Be brief.").run(task)
    return result, server, sleeps


def bodies(server: FakeAnthropicServer) -> list[dict[str, Any]]:
    return [request.json for request in server.requests]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_tool_round_then_the_answer(stream: bool) -> None:
    script = [message(content=[tool_use("add", {"a": 2, "b": 3})]), message("2 + 3 = 5")]
    result, server, _ = run(script, task="What is 2 + 3?", stream=stream)
    assert (result.answer, result.stop_reason, result.tool_calls) == (
        "2 + 3 = 5",
        "final_answer",
        1,
    )
    first, second = bodies(server)
    assert first["system"] == "Be brief." and first["messages"][0]["role"] == "user"
    assert {t["name"] for t in first["tools"]} == {"read_file", "get_time", "add"}
    assert all("input_schema" in t for t in first["tools"])
    (answer,) = second["messages"][2]["content"]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == "toolu_00_add"
    assert json.loads(answer["content"]) == {"ok": True, "output": 5}
    assert second.get("stream", False) is stream


@pytest.mark.parametrize(
    ("name", "stream"),
    [
        ("anthropic_parallel_tool_use.json", False),
        ("anthropic_stream_thinking_parallel_tool_use.sse", True),
        ("anthropic_stream_thinking_parallel_tool_use.jsonl", True),
    ],
)
def test_thinking_and_parallel_calls_are_echoed_byte_exact(name: str, stream: bool) -> None:
    result, server, _ = run([fixture(name), message("foo says hello; bar is missing")],
                            stream=stream, thinking_budget=2048)  # fmt: skip
    assert result.stop_reason == "final_answer", result.error
    assert result.answer == "foo says hello; bar is missing"
    first, second = bodies(server)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    echoed = second["messages"][1]["content"]
    if name.endswith(".json"):
        assert echoed == json.loads((WIRE / name).read_text())["content"]
    else:
        signature = [
            e for e in events_of(name) if e.get("delta", {}).get("type") == "signature_delta"
        ]
        assert echoed[0] == {
            "type": "thinking",
            "thinking": "The user wants two files read and the clock checked.",
            "signature": signature[0]["delta"]["signature"],
        }
    assert f'"signature":"{echoed[0]["signature"]}"'.encode() in server.requests[1].body
    results = second["messages"][2]["content"]
    uses = [b["id"] for b in echoed if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in results] == uses
    assert [b.get("is_error", False) for b in results][:2] == [False, True]
    assert "src/bar.txt does not exist" in results[1]["content"]


def test_pause_turn_is_sent_back_unchanged_and_continued_within_one_step() -> None:
    paused = json.loads((WIRE / "anthropic_pause_turn.json").read_text())
    result, server, _ = run([paused, message(" The latest release is b6000.")], task="News?")
    assert result.stop_reason == "final_answer" and result.model_calls == 1
    assert result.answer == "I'll search for recent releases. The latest release is b6000."
    continued = bodies(server)[1]["messages"]
    assert continued[-1] == {"role": "assistant", "content": paused["content"]}
    assert result.usage.input_tokens == 3120 + 10


def test_a_turn_paused_again_and_again_is_a_clean_error() -> None:
    paused = json.loads((WIRE / "anthropic_pause_turn.json").read_text())
    result, server, _ = run([paused] * 6, task="News?")
    assert result.stop_reason == "model_error" and "paused its turn 5 times" in (result.error or "")
    assert len(server.requests) == 5


@pytest.mark.parametrize(
    "name",
    [
        "anthropic_stream_max_tokens_partial_tool_input.sse",
        "anthropic_stream_max_tokens_partial_tool_input.jsonl",
    ],
)
def test_a_tool_input_cut_off_by_max_tokens_never_runs(name: str) -> None:
    result, server, _ = run([fixture(name), message("Shorter: see taxes.txt")], stream=True)
    assert result.answer == "Shorter: see taxes.txt" and result.tool_calls == 0
    second = bodies(server)[1]["messages"]
    cut = second[1]["content"][1]
    assert (cut["type"], cut["name"], cut["input"]) == ("tool_use", "make_file", {})
    refused, notice = second[2]["content"]
    assert refused["is_error"] and "not executed" in refused["content"]
    assert "cut off at the output limit" in notice["text"]
    assert any("truncated" in w for w in result.warnings)


def test_cut_off_twice_stops_with_truncated() -> None:
    cut = fixture("anthropic_stream_max_tokens_partial_tool_input.sse")
    result, _, _ = run([cut, cut], stream=True)
    assert result.stop_reason == StopReason.TRUNCATED and result.tool_calls == 0


@pytest.mark.parametrize(
    ("name", "stream"),
    [("anthropic_refusal.json", False), ("anthropic_stream_refusal.jsonl", True)],
)
def test_refusal_stops_with_content_filter_and_keeps_the_reason(name: str, stream: bool) -> None:
    result, _, _ = run([fixture(name)], stream=stream)
    assert result.stop_reason == StopReason.CONTENT_FILTER and result.answer is None
    assert "This request was refused due to policy." in result.history[-1].content


def test_context_window_exceeded_is_a_clean_stop_that_says_so() -> None:
    result, server, _ = run([fixture("anthropic_model_context_window_exceeded.json")])
    assert result.stop_reason == StopReason.MODEL_ERROR and len(server.requests) == 1
    assert "context window" in (result.error or "")


def test_stop_sequence_and_end_turn_answer() -> None:
    result, _, _ = run([fixture("anthropic_stop_sequence.json")])
    assert result.answer == "<answer>42"
    result, _, _ = run([fixture("anthropic_end_turn.json")])
    assert result.answer == "It's 18 °C and partly cloudy in Paris."
    assert result.usage.cached_tokens == 2048 and result.usage.input_tokens == 561 + 2048


def test_max_tokens_text_is_retried_once_then_truncated() -> None:
    cut = fixture("anthropic_max_tokens.json")
    result, server, _ = run([cut, cut])
    assert result.stop_reason == StopReason.TRUNCATED and len(server.requests) == 2


def test_the_journal_holds_the_request_and_the_response_and_replays(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    script = [fixture("anthropic_tool_use.json"), message("18 °C in Paris")]

    @tool(read_only=True)
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Weather.

        Args:
            location: where
            unit: the unit
        """
        return f"18 {unit} in {location}"

    with FakeAnthropicServer(script) as server, Journal(trace) as journal:
        model = AnthropicModel(model="claude-test", base_url=server.base_url)
        result = Agent(model, [get_weather], journal=journal).run("Weather in Paris?")
    assert result.answer == "18 °C in Paris"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    responses = [e for e in events if e["type"] == "response"]
    recorded = json.loads((WIRE / "anthropic_tool_use.json").read_text())
    assert responses[0]["raw"] == recorded
    assert responses[0]["request"]["messages"][0]["content"] == "Weather in Paris?"
    assert "new_messages" in responses[1]["request"]
    report = replay(trace, tools=[get_weather])
    assert report.identical, report.describe()


def test_the_same_task_over_openai_and_anthropic_gives_the_same_answer_and_calls() -> None:
    def calls_of(agent_model: Any) -> tuple[str | None, list[tuple[str, Any, Any]]]:
        seen: list[Event] = []
        result = Agent(agent_model, TOOLS, observers=[seen.append]).run("Read foo, then add")
        calls = [e.data["call"] for e in seen if e.type == "tool_call"]
        outputs = [e.data["result"]["output"] for e in seen if e.type == "tool_result"]
        return result.answer, [
            (c["name"], json.loads(c["arguments"]), out)
            for c, out in zip(calls, outputs, strict=True)
        ]

    openai_script = [
        completion(tool_calls=[openai_call("read_file", {"path": "src/foo.txt"})]),
        completion(tool_calls=[openai_call("add", {"a": 1, "b": 2})]),
        completion("foo says hello; 1 + 2 = 3"),
    ]
    anthropic_script = [
        message(content=[tool_use("read_file", {"path": "src/foo.txt"})]),
        message(content=[tool_use("add", {"a": 1, "b": 2})]),
        message("foo says hello; 1 + 2 = 3"),
    ]
    with FakeOpenAIServer(openai_script) as openai_server:
        via_openai = calls_of(OpenAIChatModel(model="m", base_url=openai_server.base_url))
    with FakeAnthropicServer(anthropic_script) as anthropic_server:
        via_anthropic = calls_of(AnthropicModel(model="m", base_url=anthropic_server.base_url))
    assert via_openai == via_anthropic
    assert via_anthropic[1] == [
        ("read_file", {"path": "src/foo.txt"}, "hello from foo\n"),
        ("add", {"a": 1, "b": 2}, 3),
    ]


def test_a_streamed_reply_is_journaled_with_its_events_as_received() -> None:
    seen: list[Event] = []
    recorded = events_of("anthropic_stream_tool_use.sse")
    with FakeAnthropicServer(
        [fixture("anthropic_stream_tool_use.sse"), message("18 °C")]
    ) as server:
        model = AnthropicModel(model="claude-test", base_url=server.base_url, stream=True)
        Agent(model, TOOLS, observers=[seen.append]).run("Weather?")
    raw = next(e.data["raw"] for e in seen if e.type == "response")
    assert raw["events"] == recorded
    assert raw["model"] == "claude-sonnet-4-5-20250929" and raw["stop_reason"] == "tool_use"


@pytest.mark.parametrize(
    ("name", "retried"),
    [
        ("error_anthropic_429_rate_limit.json", True),
        ("error_anthropic_529_overloaded.json", True),
        ("error_anthropic_500.json", True),
        ("anthropic_stream_error_midstream.sse", True),
        ("error_anthropic_400_prompt_too_long.json", False),
        ("error_anthropic_400_tool_schema.json", False),
        ("error_anthropic_400_missing_tool_result.json", False),
        ("error_anthropic_413_request_too_large.json", False),
    ],
)
def test_each_recorded_error_in_a_full_run(name: str, retried: bool) -> None:
    result, server, sleeps = run(
        [fixture(name), message("recovered")], stream=name.endswith(".sse")
    )
    if retried:
        assert result.answer == "recovered" and len(server.requests) == 2 and len(sleeps) == 1
    else:
        assert result.stop_reason == StopReason.MODEL_ERROR and len(server.requests) == 1
        body = json.loads((WIRE / name).read_text())["body"]
        assert body["error"]["message"][:40] in (result.error or "")


def test_the_recorded_streamed_tool_use_in_a_full_run() -> None:
    @tool(read_only=True)
    def get_weather(location: str, unit: str = "celsius") -> str:
        """Weather.

        Args:
            location: where
            unit: the unit
        """
        return f"18 {unit} in {location}"

    script = [fixture("anthropic_stream_tool_use.jsonl"), message("18 °C")]
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel(model="claude-test", base_url=server.base_url, stream=True)
        result = Agent(model, [get_weather]).run("Weather?")
    assert result.answer == "18 °C" and result.tool_calls == 1
    (answer,) = server.requests[1].json["messages"][2]["content"]
    assert answer["tool_use_id"] == "toolu_01NRLabsLyVHZPKxbKvkfSMn"
    assert json.loads(answer["content"]) == {"ok": True, "output": "18 celsius in Paris"}
