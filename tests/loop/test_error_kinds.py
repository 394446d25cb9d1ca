"""``RunResult.error_kind``: what kind of model failure ended a run, for code that reacts to it
(wait on a rate limit, fix the key on ``auth``, shorten the history on ``context_length``).

Every recorded provider error goes through its real adapter and a real HTTP server; the
kinds that no server sends are made by the harness itself (a refused connection, an
unreadable reply, an adapter bug)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import (
    ERROR_KINDS,
    Agent,
    FunctionModel,
    Limits,
    ModelError,
    ModelRequest,
    ModelTurn,
    StopReason,
)
from reactloop.errors import provider_error_kind
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    anthropic_fixture_replies,
    fixture_replies,
    free_port,
    json_reply,
)

WIRE = Path(__file__).resolve().parents[1] / "wire_formats"

KINDS = {
    "error_anthropic_400_missing_tool_result.json": "bad_request",
    "error_anthropic_400_prompt_too_long.json": "context_length",
    "error_anthropic_400_tool_schema.json": "bad_request",
    "error_anthropic_413_request_too_large.json": "context_length",
    "error_anthropic_429_rate_limit.json": "rate_limit",
    "error_anthropic_500.json": "server",
    "error_anthropic_529_overloaded.json": "server",
    "error_dashscope_400_missing_tool_response.json": "bad_request",
    "error_dashscope_400_thinking_requires_stream.json": "bad_request",
    "error_deepseek_400_context_length.json": "context_length",
    "error_deepseek_400_reasoning_content_not_passed_back.json": "bad_request",
    "error_deepseek_400_tool_schema.json": "bad_request",
    "error_deepseek_402_insufficient_balance.json": "quota",
    "error_llamacpp_400_context_size.json": "context_length",
    "error_llamacpp_500_tools_with_stream_old_build.json": "server",
    "error_ollama_404_model_not_found.json": "not_found",
    "error_ollama_openai_404.json": "not_found",
    "error_openai_400_context_length.json": "context_length",
    "error_openai_400_context_length_legacy_message.json": "context_length",
    "error_openai_400_missing_tool_response.json": "bad_request",
    "error_openai_400_orphan_tool_message.json": "bad_request",
    "error_openai_400_tool_schema.json": "bad_request",
    "error_openai_429_insufficient_quota.json": "quota",
    "error_openai_429_rate_limit.json": "rate_limit",
    "error_openai_429_request_too_large.json": "rate_limit",
    "error_openai_500.json": "server",
    "error_openai_503_overloaded.json": "server",
    "error_vllm_400_auto_tool_choice_disabled.json": "bad_request",
    "error_vllm_400_context_length_legacy_shape.json": "context_length",
    "error_vllm_400_malformed_history_arguments.json": "bad_request",
}
NO_RETRIES = Limits(max_seconds=30)


def test_every_recorded_error_has_its_expected_kind() -> None:
    assert sorted(KINDS) == sorted(p.name for p in WIRE.glob("error_*.json"))
    assert set(KINDS.values()) <= set(ERROR_KINDS)


def stop_event(events: list[Any]) -> dict[str, Any]:
    (stop,) = [e.data for e in events if e.type == "stop"]
    return dict(stop)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_recorded_provider_error_ends_the_run_with_its_kind(name: str) -> None:
    events: list[Any] = []
    if name.startswith("error_anthropic"):
        with FakeAnthropicServer(anthropic_fixture_replies(WIRE / name)) as server:
            model: Any = AnthropicModel(model="m", base_url=server.base_url, max_retries=0)
            result = Agent(model, [], limits=NO_RETRIES, observers=[events.append]).run("hi")
    else:
        with FakeOpenAIServer(fixture_replies(WIRE / name)) as server:
            model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=0)
            result = Agent(model, [], limits=NO_RETRIES, observers=[events.append]).run("hi")
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert result.error_kind == KINDS[name]
    assert result.to_dict()["error_kind"] == KINDS[name]
    assert stop_event(events)["error_kind"] == KINDS[name]


def test_the_kind_survives_the_retries() -> None:
    body = json.loads((WIRE / "error_openai_429_rate_limit.json").read_text())
    replies = fixture_replies(WIRE / "error_openai_429_rate_limit.json") * 3
    with FakeOpenAIServer(replies) as server:
        model = OpenAIChatModel(
            model="m", base_url=server.base_url, max_retries=2, sleep=lambda _: None
        )
        result = Agent(model, [], limits=NO_RETRIES).run("hi")
    assert len(server.requests) == 3
    assert "gave up after 3 attempts" in (result.error or "")
    assert body["body"]["error"]["message"][:30] in (result.error or "")
    assert result.error_kind == "rate_limit"


def test_nothing_listening_is_a_connection_error() -> None:
    model = OpenAIChatModel(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1")
    result = Agent(model, [], limits=NO_RETRIES).run("hi")
    assert (result.stop_reason, result.error_kind) == (StopReason.MODEL_ERROR, "connection")


def test_a_reply_that_is_not_a_completion_is_a_bad_reply() -> None:
    with FakeOpenAIServer([json_reply({"object": "nonsense"})]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=0)
        result = Agent(model, [], limits=NO_RETRIES).run("hi")
    assert (result.stop_reason, result.error_kind) == (StopReason.MODEL_ERROR, "bad_reply")


def failing(exc: BaseException) -> FunctionModel:
    def complete(request: ModelRequest) -> ModelTurn:
        raise exc

    return FunctionModel(complete)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ModelError("slow down", kind="rate_limit"), "rate_limit"),
        (ModelError("plain"), "other"),
        (ModelError("made up", kind="no such kind"), "other"),
        (ValueError("an adapter bug"), "internal"),
    ],
)
def test_a_models_own_error_keeps_a_known_kind(exc: BaseException, kind: str) -> None:
    result = Agent(failing(exc), [], limits=NO_RETRIES).run("hi")
    assert (result.stop_reason, result.error_kind) == (StopReason.MODEL_ERROR, kind)


class ReturnsADict:
    """A model of the user's own whose ``complete`` returns something else than a turn."""

    name = "odd"
    native_tools = True

    def complete(self, request: ModelRequest) -> Any:
        return {"text": "not a ModelTurn"}


def test_a_turn_of_the_wrong_type_is_a_bad_reply() -> None:
    result = Agent(ReturnsADict(), [], limits=NO_RETRIES).run("hi")
    assert (result.stop_reason, result.error_kind) == (StopReason.MODEL_ERROR, "bad_reply")


def test_other_stops_have_no_error_kind() -> None:
    result = Agent(FunctionModel(lambda request: ModelTurn(text="done")), []).run("hi")
    assert (result.stop_reason, result.error_kind) == (StopReason.FINAL_ANSWER, None)


@pytest.mark.parametrize(
    ("status", "code", "message", "kind"),
    [
        (401, "invalid_api_key", "Incorrect API key provided", "auth"),
        (403, None, "not allowed", "auth"),
        (408, None, "request timeout", "timeout"),
        (429, "rate_limit_exceeded", "Rate limit reached", "rate_limit"),
        (429, None, "You exceeded your current quota", "quota"),
        (400, "exceed_context_size_error", "exceeds the available context size", "context_length"),
        (422, None, "unprocessable", "bad_request"),
        (502, None, "bad gateway", "server"),
        (None, None, "no status at all", "other"),
    ],
)
def test_provider_error_kind_reads_status_code_and_message(
    status: int | None, code: str | None, message: str, kind: str
) -> None:
    assert provider_error_kind(status, code, message) == kind
