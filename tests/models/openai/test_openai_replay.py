"""Every OpenAI-compatible wire file of tests/wire_formats, served by the fake server,
drives a full Agent run through the real adapter; we check the outcome and the next request."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Limits, StopReason, tool
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer, Reply, completion, fixture_replies, sse_reply

WIRE = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[2] / "wire_formats"
)
pytestmark = pytest.mark.skipif(not WIRE.is_dir(), reason=f"wire formats not found at {WIRE}")

EXECUTED: list[tuple[str, dict[str, Any]]] = []


@tool(read_only=True)
def get_weather(
    location: str = "", city: str = "", country: str = "", unit: str = "", units: str = ""
) -> str:
    """Current weather for a place."""
    EXECUTED.append(("get_weather", {"location": location, "city": city}))
    return "18 C, sunny"


@tool(read_only=True)
def get_current_weather(location: str) -> str:
    """Current weather for a place."""
    EXECUTED.append(("get_current_weather", {"location": location}))
    return "sunny"


@tool(read_only=True)
def get_stock_price(ticker: str, exchange: str = "") -> float:
    """Latest price of a ticker."""
    EXECUTED.append(("get_stock_price", {"ticker": ticker}))
    return 123.5


@tool(read_only=True)
def read_file(path: str, max_bytes: int = 0) -> str:
    """Read a file."""
    EXECUTED.append(("read_file", {"path": path}))
    return "# Project"


@tool(read_only=True)
def list_files(path: str) -> list[str]:
    """List files."""
    EXECUTED.append(("list_files", {"path": path}))
    return ["a.txt"]


@tool(read_only=True)
def list_workspaces() -> list[str]:
    """List workspaces (no parameters)."""
    EXECUTED.append(("list_workspaces", {}))
    return ["main"]


@tool
def write_file(path: str, content: str) -> str:
    """Write a file (a side effect)."""
    EXECUTED.append(("write_file", {"path": path}))
    return "written"


TOOLS = [
    get_weather,
    get_current_weather,
    get_stock_price,
    read_file,
    list_files,
    list_workspaces,
    write_file,
]


@pytest.fixture(autouse=True)
def _clear_executed() -> None:
    EXECUTED.clear()


def wire(name: str) -> list[Reply]:
    return fixture_replies(WIRE / name)


def run(
    replies: list[Reply | dict[str, Any] | str],
    *,
    provider: str = "openai",
    stream: bool = False,
    sleeps: list[float] | None = None,
    **limits: Any,
) -> tuple[Any, FakeOpenAIServer]:
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel(
            model="m",
            base_url=server.base_url,
            provider=provider,
            stream=stream,
            sleep=(sleeps if sleeps is not None else []).append,
        )
        result = Agent(model, TOOLS, limits=Limits(**limits)).run("task")
    for request in server.requests:
        assert_valid_transcript(request.json["messages"])
    return result, server


def assert_valid_transcript(messages: list[dict[str, Any]]) -> None:
    """What strict servers (OpenAI, vLLM, llama-server) check before they accept a request."""
    pending: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert pending, f"tool message answers no call: {message}"
            assert message["tool_call_id"] == pending.pop(0)
            continue
        assert not pending, f"calls without results before {message}"
        assert isinstance(message["content"], str)
        for call in message.get("tool_calls") or ():
            assert call["id"] and call["type"] == "function"
            assert isinstance(json.loads(call["function"]["arguments"]), dict)
            pending.append(call["id"])
    assert not pending


def messages_of(server: FakeOpenAIServer, index: int) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = server.requests[index].json["messages"]
    return result


def answer(text: str = "done", *, stream: bool = False) -> Reply | dict[str, Any]:
    if not stream:
        return completion(text)
    delta = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return sse_reply([delta, finish])


# --- non-streamed tool calls ------------------------------------------------------------------

TOOL_CALL_FILES = [
    ("openai_tool_call.json", "openai", [("get_weather", "call_Vq3mT8xRk2LpZ7wN4yHs1dJf")]),
    (
        "openai_parallel_tool_calls.json",
        "openai",
        [("get_weather", None), ("get_stock_price", None)],
    ),
    (
        "deepseek_tool_call_thinking.json",
        "deepseek",
        [("read_file", "call_00_Vv3bQ9Lk2mXe8RtPz5Yw7NcA")],
    ),
    ("dashscope_tool_call.json", "qwen", [("get_current_weather", "call_0bdcc155f2534f65a05cb1")]),
    ("ollama_openai_tool_call.json", "ollama", [("get_weather", "call_k3v9x2qa")]),
    (
        "vllm_tool_call.json",
        "vllm",
        [("get_weather", "chatcmpl-tool-3c1d8e2f9a0b4c7d8e6f5a4b3c2d1e0f")],
    ),
    ("llamacpp_server_tool_call.json", "llamacpp", [("get_current_weather", None)]),
    ("llama_cpp_python_tool_call.json", "llamacpp", [("get_weather", None)]),
]


@pytest.mark.parametrize(("name", "provider", "expected"), TOOL_CALL_FILES)
def test_tool_call_file_runs_and_echoes_ids(
    name: str, provider: str, expected: list[tuple[str, str | None]]
) -> None:
    result, server = run([*wire(name), answer()], provider=provider)
    assert result.stop_reason == StopReason.FINAL_ANSWER
    ran = sorted(tool_name for tool_name, _ in EXECUTED)  # a read-only batch runs concurrently
    assert ran == sorted(tool_name for tool_name, _ in expected)
    sent = json.loads((WIRE / name).read_text())["choices"][0]["message"]
    assistant, *tool_messages = messages_of(server, 1)[-1 - len(expected) :]
    assert [c["id"] for c in assistant["tool_calls"]] == [c["id"] for c in sent["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in sent["tool_calls"]]
    assert assistant["content"] == (sent["content"] or "")
    assert "function_call" not in assistant  # llama-cpp-python's legacy duplicate is not echoed


def test_deepseek_thinking_echo_matches_the_documented_next_request() -> None:
    _, server = run([*wire("deepseek_tool_call_thinking.json"), answer()], provider="deepseek")
    documented = json.loads((WIRE / "deepseek_request_thinking_tool_loop.json").read_text())
    echoed = messages_of(server, 1)
    assert echoed[-2] == documented["messages"][1]
    assert echoed[-1]["tool_call_id"] == documented["messages"][2]["tool_call_id"]


def test_vllm_echo_keeps_whitespace_content_and_reasoning() -> None:
    _, server = run([*wire("vllm_tool_call.json"), answer()], provider="vllm")
    assistant, tool_message = messages_of(server, 1)[-2:]
    assert assistant["content"] == "\n\n"
    assert assistant["reasoning_content"] == assistant["reasoning"]
    assert tool_message["name"] == "get_weather"  # Hermes templates need the name


def test_ollama_reasoning_is_echoed_under_its_own_key_and_tool_choice_is_not_sent() -> None:
    _, server = run([*wire("ollama_openai_tool_call.json"), answer()], provider="ollama")
    assistant = messages_of(server, 1)[-2]
    assert assistant["reasoning"].startswith("The user asks")
    assert "tool_choice" not in server.requests[0].json


def test_unparsed_hermes_tool_call_in_content_is_recovered_and_echoed_as_a_real_call() -> None:
    result, server = run([*wire("vllm_hermes_unparsed_tool_call.json"), answer()], provider="vllm")
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert EXECUTED == [("get_weather", {"location": "Paris, France", "city": ""})]
    assistant, tool_message = messages_of(server, 1)[-2:]
    assert "<tool_call>" not in assistant["content"]
    assert assistant["tool_calls"][0]["id"] == tool_message["tool_call_id"]


def test_kimi_ids_repeated_over_turns_stay_unique_for_the_loop_and_exact_on_the_wire() -> None:
    result, server = run([*wire("vllm_kimi_repeated_tool_ids.json"), answer()], provider="vllm")
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert len(EXECUTED) == 2
    loop_ids = [c.id for m in result.history for c in m.tool_calls]
    assert len(set(loop_ids)) == 2
    echoed = [m for m in messages_of(server, 2) if m["role"] in ("assistant", "tool")]
    ids = [
        m["tool_calls"][0]["id"] if m["role"] == "assistant" else m["tool_call_id"] for m in echoed
    ]
    assert ids == ["functions.get_weather:0"] * 4


# --- finish reasons ---------------------------------------------------------------------------


def test_finish_stop_is_the_final_answer_with_usage() -> None:
    result, _ = run(wire("openai_finish_stop.json"))
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert result.answer and result.usage.input_tokens > 0


def test_deepseek_reasoning_answer_counts_cached_and_reasoning_tokens() -> None:
    result, _ = run(wire("deepseek_reasoning.json"), provider="deepseek")
    body = json.loads((WIRE / "deepseek_reasoning.json").read_text())
    assert result.answer == body["choices"][0]["message"]["content"].strip()
    assert result.usage.cached_tokens == body["usage"]["prompt_cache_hit_tokens"]
    assert (
        result.usage.reasoning_tokens
        == body["usage"]["completion_tokens_details"]["reasoning_tokens"]
    )


def test_deepseek_keepalive_blank_lines_before_the_body() -> None:
    result, _ = run(wire("deepseek_keepalive_nonstream_body.txt"), provider="deepseek")
    assert result.answer == "Hello! How can I help you today?"


def test_finish_length_asks_once_for_a_shorter_reply_then_stops_truncated() -> None:
    length = wire("openai_finish_length.json")[0]
    result, server = run([length, length])
    assert result.stop_reason == StopReason.TRUNCATED
    assert len(server.requests) == 2
    last = messages_of(server, 1)[-1]
    assert last["role"] == "user" and "cut off" in last["content"]


def test_truncated_tool_call_is_never_executed_and_the_next_request_is_valid() -> None:
    result, server = run([*wire("openai_finish_length_truncated_tool_call.json"), answer()])
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert EXECUTED == []
    assistant, not_run, notice = messages_of(server, 1)[-3:]
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    assert json.loads(not_run["content"])["ok"] is False
    assert notice["role"] == "user"


def test_content_filter_stops_with_that_reason() -> None:
    result, _ = run(wire("openai_finish_content_filter.json"))
    assert result.stop_reason == StopReason.CONTENT_FILTER
    assert result.answer is None


# --- streams ----------------------------------------------------------------------------------

STREAM_FILES = [
    ("openai_stream_tool_call.sse", "openai", ["read_file"]),
    ("openai_stream_tool_call.jsonl", "openai", ["read_file"]),
    ("openai_stream_parallel_tool_calls.sse", "openai", ["get_weather", "get_stock_price"]),
    ("openai_stream_same_index_split_entries.jsonl", "openai", ["list_files"]),
    ("openai_compat_stream_nonzero_index.jsonl", "openai", ["list_workspaces"]),
    ("deepseek_stream_tool_call.sse", "deepseek", ["read_file"]),
    ("dashscope_stream_tool_call.sse", "qwen", ["get_current_weather"]),
    ("ollama_openai_stream_tool_call.sse", "ollama", ["get_weather"]),
    ("ollama_openai_stream_tool_call_legacy.jsonl", "ollama", ["get_weather"]),
    ("vllm_stream_tool_call.sse", "vllm", ["get_weather"]),
    ("llamacpp_server_stream_tool_call.sse", "llamacpp", ["get_current_weather"]),
    ("llama_cpp_python_stream_tool_call.jsonl", "llamacpp", ["get_weather"]),
]


@pytest.mark.parametrize(("name", "provider", "tools"), STREAM_FILES)
def test_streamed_tool_call_file_runs(name: str, provider: str, tools: list[str]) -> None:
    result, server = run([*wire(name), answer(stream=True)], provider=provider, stream=True)
    assert result.stop_reason == StopReason.FINAL_ANSWER, result.error
    # a turn of read-only calls runs them concurrently: the order they ran in is not fixed
    assert sorted(tool_name for tool_name, _ in EXECUTED) == sorted(tools)
    assert all(r.json["stream_options"] == {"include_usage": True} for r in server.requests)
    if '"prompt_tokens"' in (WIRE / name).read_text():
        assert result.usage.input_tokens > 0


def test_no_argument_call_streamed_as_empty_arguments_is_echoed_as_an_empty_object() -> None:
    _, server = run(
        [*wire("openai_compat_stream_nonzero_index.jsonl"), answer(stream=True)], stream=True
    )
    assistant = messages_of(server, 1)[-2]
    assert assistant["content"] == "Now listing your workspaces:"
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"


def test_deepseek_streamed_reasoning_is_echoed_on_the_tool_call_turn() -> None:
    _, server = run(
        [*wire("deepseek_stream_tool_call.sse"), answer(stream=True)],
        provider="deepseek",
        stream=True,
    )
    assert messages_of(server, 1)[-2]["reasoning_content"]


def test_keepalive_comments_before_the_first_chunk() -> None:
    result, _ = run(wire("deepseek_keepalive_stream.sse"), provider="deepseek", stream=True)
    assert result.answer == "Hello!"


def test_server_error_inside_a_200_stream_is_retried_then_stops_with_the_providers_message() -> (
    None
):
    sleeps: list[float] = []
    broken = wire("openai_stream_error_midstream.sse") * 3
    result, server = run(broken, stream=True, sleeps=sleeps)
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert "The server had an error while processing your request" in (result.error or "")
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_error_inside_a_200_stream_then_success_on_retry() -> None:
    replies = [*wire("openai_stream_error_midstream.sse"), *wire("openai_stream_tool_call.sse")]
    result, _ = run([*replies, answer(stream=True)], stream=True)
    assert result.stop_reason == StopReason.FINAL_ANSWER
    assert [name for name, _ in EXECUTED] == ["read_file"]
