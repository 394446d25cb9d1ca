"""Errors over real HTTP: what is retried (and how long it waits), what is not, time limits,
keys and base URLs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reactloop.errors import ModelError, ProviderError, UsageError
from reactloop.messages import Message, ModelTurn, ToolSpec
from reactloop.models import resolve_model
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.anthropic.endpoint import PLACEHOLDER_KEY
from reactloop.models.anthropic.errors import provider_error, read_error_body
from reactloop.models.base import ModelRequest, ModelSettings
from reactloop.testing import Reply, disconnect, free_port
from reactloop.testing.anthropic_replies import (
    anthropic_error,
    anthropic_fixture_replies,
    event_stream,
    message,
    stream_events,
)
from reactloop.testing.fake_anthropic import FakeAnthropicServer

WIRE = Path(__file__).resolve().parents[2] / "wire_formats"
REQUEST = ModelRequest(messages=[Message(role="user", content="hi", kind="task")])


def complete(
    script: list[Any], request: ModelRequest = REQUEST, **options: Any
) -> tuple[ModelTurn | ModelError, FakeAnthropicServer, list[float]]:
    sleeps: list[float] = []
    with FakeAnthropicServer(script) as server:
        model = AnthropicModel(
            model="claude-test", base_url=server.base_url, sleep=sleeps.append, **options
        )
        try:
            outcome: ModelTurn | ModelError = model.complete(request)
        except ModelError as exc:
            outcome = exc
    return outcome, server, sleeps


def error_fixture(name: str) -> Reply:
    return anthropic_fixture_replies(WIRE / name)[0]


@pytest.mark.parametrize(
    ("name", "waited"),
    [
        ("error_anthropic_429_rate_limit.json", 23.0),
        ("error_anthropic_529_overloaded.json", None),
        ("error_anthropic_500.json", None),
    ],
)
def test_transient_errors_are_retried_honouring_retry_after(
    name: str, waited: float | None
) -> None:
    outcome, server, sleeps = complete([error_fixture(name), message("ok")])
    assert isinstance(outcome, ModelTurn) and outcome.text == "ok"
    assert len(server.requests) == 2 and len(sleeps) == 1
    if waited is not None:
        assert sleeps == [waited]


@pytest.mark.parametrize(
    ("name", "status", "kind", "says"),
    [
        ("error_anthropic_400_prompt_too_long.json", 400, "invalid_request_error", "too long"),
        ("error_anthropic_400_tool_schema.json", 400, "invalid_request_error", "input_schema"),
        ("error_anthropic_400_missing_tool_result.json", 400, "invalid_request_error", "tool_use"),
        ("error_anthropic_413_request_too_large.json", 413, "request_too_large", "maximum"),
    ],
)
def test_request_errors_are_not_retried_and_keep_anthropics_message(
    name: str, status: int, kind: str, says: str
) -> None:
    outcome, server, sleeps = complete([error_fixture(name), message("never")])
    assert isinstance(outcome, ProviderError) and not outcome.retryable
    assert (outcome.status, outcome.code) == (status, kind)
    assert says in str(outcome) and f"HTTP {status} [{kind}]" in str(outcome)
    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize(
    ("status", "kind", "hint"),
    [
        (401, "authentication_error", "ANTHROPIC_API_KEY"),
        (403, "permission_error", "not be allowed"),
        (404, "not_found_error", "--base-url"),
    ],
)
def test_auth_and_not_found_are_not_retried_and_say_what_to_check(
    status: int, kind: str, hint: str
) -> None:
    outcome, server, _ = complete([anthropic_error(status, kind, "no"), message("never")])
    assert isinstance(outcome, ProviderError) and hint in str(outcome)
    assert len(server.requests) == 1


def test_the_server_can_forbid_a_retry() -> None:
    refusal = anthropic_error(500, "api_error", "down", headers={"x-should-retry": "false"})
    outcome, server, _ = complete([refusal, message("never")])
    assert isinstance(outcome, ProviderError) and len(server.requests) == 1


def test_retries_run_out_with_a_message_that_says_so() -> None:
    overloaded = error_fixture("error_anthropic_529_overloaded.json")
    outcome, server, sleeps = complete([overloaded] * 3, max_retries=2)
    assert isinstance(outcome, ProviderError) and "gave up after 3 attempts" in str(outcome)
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_an_error_event_in_the_middle_of_a_stream() -> None:
    broken = anthropic_fixture_replies(WIRE / "anthropic_stream_error_midstream.sse")[0]
    outcome, _, _ = complete([broken], max_retries=0, stream=True)
    assert isinstance(outcome, ProviderError) and "Overloaded" in str(outcome)
    assert outcome.code == "overloaded_error" and outcome.retryable
    outcome, _, _ = complete([broken, message("second try")], stream=True)
    assert isinstance(outcome, ModelTurn) and outcome.text == "second try"


@pytest.mark.parametrize(
    "failure",
    [
        disconnect(),
        event_stream(stream_events(message("cut")), break_after=3),
        event_stream(stream_events(message("no stop"))[:-1]),
    ],
    ids=["disconnect", "broken-stream", "no-message-stop"],
)
def test_broken_replies_are_retried(failure: Reply) -> None:
    outcome, server, _ = complete([failure, message("whole")], stream=True)
    assert isinstance(outcome, ModelTurn) and outcome.text == "whole"
    assert len(server.requests) == 2


def test_a_stream_without_message_stop_is_never_a_shorter_turn() -> None:
    cut = event_stream(stream_events(message("half"))[:-1])
    outcome, _, _ = complete([cut], stream=True, max_retries=0)
    assert isinstance(outcome, ModelError) and "before message_stop" in str(outcome)


@pytest.mark.parametrize(
    "slow",
    [
        Reply(body=b"{}", delay=5.0),
        event_stream(stream_events(message("x" * 40), piece=1), interval=0.2),
    ],
    ids=["stalled", "trickle"],
)
def test_the_runs_time_limit_bounds_every_call(slow: Reply) -> None:
    request = ModelRequest(messages=REQUEST.messages, timeout=0.5)
    started = time.monotonic()
    outcome, _, _ = complete([slow, slow, slow], request, stream=True)
    assert isinstance(outcome, ModelError) and "left in the run" in str(outcome)
    assert time.monotonic() - started < 3.0


def test_nothing_listening_on_this_machine_is_not_retried() -> None:
    sleeps: list[float] = []
    model = AnthropicModel(
        model="claude-test", base_url=f"http://127.0.0.1:{free_port()}", sleep=sleeps.append
    )
    with pytest.raises(ModelError, match="nothing listens") as caught:
        model.complete(REQUEST)
    assert not caught.value.retryable and sleeps == []


def test_a_missing_key_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(UsageError) as caught:
        resolve_model("anthropic:claude-sonnet-4-6")
    assert "ANTHROPIC_API_KEY" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(UsageError, match="needs a model name"):
        resolve_model("anthropic")


def test_the_key_from_the_environment_and_a_gateway_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with FakeAnthropicServer([message("hello")]) as server:
        model = resolve_model("anthropic:claude-x", ModelSettings(base_url=server.base_url + "/v1"))
        assert isinstance(model, AnthropicModel) and model.base_url == server.base_url
        assert model.complete(REQUEST).text == "hello"
        headers = server.requests[0].headers
        sent = {headers.get("x-api-key"), headers.get("authorization")}
        assert sent & {"sk-ant-test", "Bearer sk-ant-test"}  # SDK versions differ
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    gateway = resolve_model("anthropic:m", ModelSettings(base_url="http://127.0.0.1:9/"))
    assert isinstance(gateway, AnthropicModel)
    assert gateway.line.client.api_key == PLACEHOLDER_KEY


def test_settings_reach_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    settings = ModelSettings(
        max_output_tokens=9000,
        temperature=1.0,
        extra={"thinking": 4096, "cache": True, "parallel_tool_calls": False},
    )
    model = resolve_model("anthropic:claude-x", settings)
    assert isinstance(model, AnthropicModel)
    assert model.cache and not model.parallel_tool_calls and model.thinking_budget == 4096
    with pytest.raises(UsageError, match="must exceed the thinking budget"):
        resolve_model("anthropic:c", ModelSettings(max_output_tokens=100, extra={"thinking": 2048}))
    with pytest.raises(UsageError, match="token budget"):
        resolve_model("anthropic:c", ModelSettings(extra={"thinking": "lots"}))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "<html><title>502 Bad Gateway</title></html>",
        "[" * 100_000,
        '{"error": {"message": ' + "9" * 5000 + ', "type": "x"}}',
        '{"type": "error", "error": "plain text"}',
        '{"error": {"message": {"nested": [[[[1]]]]}, "type": 12}}',
    ],
)
def test_odd_error_bodies_are_read_without_crashing(text: str) -> None:
    body = read_error_body(text)
    assert body.message and len(body.message) <= 500
    error = provider_error("anthropic:test", 502, {}, text)
    assert error.retryable and str(error).startswith("anthropic:test HTTP 502")


def test_import_reactloop_does_not_import_the_sdk() -> None:
    code = (
        "import sys, reactloop, reactloop.models.anthropic, reactloop.testing.fake_anthropic\n"
        "assert 'anthropic' not in sys.modules, 'SDK imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_the_package_exports_one_model_class_and_its_factory() -> None:
    import reactloop.models.anthropic as package

    assert package.__all__ == ["AnthropicModel", "from_spec"]
    assert [name for name in dir(package) if name[0].isupper()] == ["AnthropicModel"]


def test_every_option_reaches_the_wire() -> None:
    spec = ToolSpec(name="t", description="a tool", parameters={"type": "object"})
    request = ModelRequest(messages=REQUEST.messages, tools=[spec], stop=["</answer>"])
    options = {
        "temperature": 0.5,
        "max_output_tokens": 9000,
        "thinking_budget": 2048,
        "parallel_tool_calls": False,
        "extra_body": {"metadata": {"user_id": "u1"}},
    }
    outcome, server, _ = complete([message("ok")], request, **options)
    assert isinstance(outcome, ModelTurn)
    body = server.requests[0].json
    assert (body["temperature"], body["max_tokens"]) == (0.5, 9000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert body["stop_sequences"] == ["</answer>"] and body["metadata"] == {"user_id": "u1"}
