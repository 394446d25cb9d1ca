"""Provider errors: every recorded error body, the retry decision, backoff and outages."""

from __future__ import annotations

import email.utils
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Agent, Journal, Message, ModelRequest, StopReason, read_journal, tool
from reactloop.errors import ModelError, ProviderError
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.openai.errors import read_error_body
from reactloop.models.retry import (
    RetryPolicy,
    retry_after_seconds,
)
from reactloop.testing import (
    FakeOpenAIServer,
    Reply,
    completion,
    disconnect,
    error_reply,
    fixture_replies,
    free_port,
    json_reply,
    sse_reply,
    tool_call,
)

WIRE = Path(
    os.environ.get("REACTLOOP_WIRE_FORMATS") or Path(__file__).resolve().parents[2] / "wire_formats"
)
needs_wire = pytest.mark.skipif(not WIRE.is_dir(), reason=f"wire formats not found at {WIRE}")

RETRIED = {
    "error_anthropic_429_rate_limit.json",
    "error_anthropic_500.json",
    "error_anthropic_529_overloaded.json",
    "error_llamacpp_500_tools_with_stream_old_build.json",
    "error_openai_429_rate_limit.json",
    "error_openai_500.json",
    "error_openai_503_overloaded.json",
}
ERROR_FILES = sorted(p.name for p in WIRE.glob("error_*.json")) if WIRE.is_dir() else []
USER = [Message(role="user", content="hi")]


def make_model(server: FakeOpenAIServer, sleeps: list[float], **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(model="m", base_url=server.base_url, sleep=sleeps.append, **options)


def provider_message(body: Any) -> str:
    if isinstance(body.get("error"), dict):
        return str(body["error"]["message"])
    return str(body.get("error") or body.get("message"))


@needs_wire
def test_every_error_file_is_known() -> None:
    assert len(ERROR_FILES) >= 30
    assert set(ERROR_FILES) >= RETRIED


@needs_wire
@pytest.mark.parametrize("name", ERROR_FILES)
def test_error_file_gives_the_providers_message_and_the_right_retry_decision(name: str) -> None:
    recorded = json.loads((WIRE / name).read_text())
    retried = name in RETRIED
    sleeps: list[float] = []
    with (
        FakeOpenAIServer(fixture_replies(WIRE / name) * 3) as server,
        pytest.raises(ProviderError) as caught,
    ):
        make_model(server, sleeps).complete(ModelRequest(messages=USER))
    error = caught.value
    assert error.status == recorded["status"]
    assert error.retryable is retried
    assert ("gave up after 3 attempts" in str(error)) is retried
    assert " ".join(provider_message(recorded["body"]).split())[:80] in str(error)
    assert len(server.requests) == (3 if retried else 1)
    assert len(sleeps) == (2 if retried else 0)
    assert "\n" not in str(error)


@needs_wire
@pytest.mark.parametrize("name", ERROR_FILES)
def test_error_file_ends_an_agent_run_with_model_error_and_the_providers_message(
    name: str,
) -> None:
    recorded = json.loads((WIRE / name).read_text())
    with FakeOpenAIServer(fixture_replies(WIRE / name) * 3) as server:
        result = Agent(make_model(server, []), [lookup]).run("look up a")
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert f"HTTP {recorded['status']}" in (result.error or "")
    assert " ".join(provider_message(recorded["body"]).split())[:80] in (result.error or "")


@needs_wire
def test_rate_limit_waits_what_retry_after_ms_asks_then_succeeds() -> None:
    sleeps: list[float] = []
    replies = [*fixture_replies(WIRE / "error_openai_429_rate_limit.json"), completion("ok")]
    with FakeOpenAIServer(replies) as server:
        turn = make_model(server, sleeps).complete(ModelRequest(messages=USER))
    assert turn.text == "ok"
    assert sleeps == [0.644]


def test_retry_after_longer_than_the_cap_fails_at_once_without_waiting() -> None:
    sleeps: list[float] = []
    slow_down = error_reply(503, {"error": {"message": "busy"}}, headers={"retry-after": "120"})
    with (
        FakeOpenAIServer([slow_down, completion("late")]) as server,
        pytest.raises(ProviderError, match="cap 60s") as caught,
    ):
        make_model(server, sleeps).complete(ModelRequest(messages=USER))
    assert caught.value.status == 503 and sleeps == [] and len(server.requests) == 1


def test_backoff_without_retry_after_doubles() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=3, sleep=sleeps.append, random=lambda: 1.0)
    attempts: list[int] = []

    def fail() -> str:
        attempts.append(1)
        raise ModelError("flaky", retryable=True)

    with pytest.raises(ModelError, match="flaky"):
        policy.run(fail)
    assert sleeps == [0.5, 1.0, 2.0] and len(attempts) == 4


def test_no_retry_starts_after_the_deadline() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=3, sleep=sleeps.append)

    def fail() -> str:
        raise ModelError("flaky", retryable=True)

    with pytest.raises(ModelError, match="no time left"):
        policy.run(fail, deadline=0.0)
    assert sleeps == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "644", "retry-after": "1"}, 0.644),
        ({"retry-after": "23"}, 23.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected


def test_retry_after_as_an_http_date() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds({"retry-after": header}, now=now) == pytest.approx(30.0)


def test_insufficient_system_resource_finish_is_retried() -> None:
    body = completion("partial")
    body["choices"][0]["finish_reason"] = "insufficient_system_resource"
    sleeps: list[float] = []
    with FakeOpenAIServer([body, completion("whole")]) as server:
        turn = make_model(server, sleeps).complete(ModelRequest(messages=USER))
    assert turn.text == "whole" and len(sleeps) == 1


def test_connection_refused_on_this_machine_is_one_clear_error_and_not_retried() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    sleeps: list[float] = []
    model = OpenAIChatModel(model="m", base_url=url, provider="vllm", sleep=sleeps.append)
    with pytest.raises(ModelError) as caught:
        model.complete(ModelRequest(messages=USER))
    message = str(caught.value)
    assert f"nothing listens at {url}" in message and "vllm server" in message
    assert "\n" not in message and sleeps == [] and not caught.value.retryable


def test_connection_refused_on_localhost_by_name_is_not_retried_either() -> None:
    url = f"http://localhost:{free_port()}/v1"
    sleeps: list[float] = []
    model = OpenAIChatModel(model="m", base_url=url, provider="openai", sleep=sleeps.append)
    with pytest.raises(ModelError, match="nothing listens at"):
        model.complete(ModelRequest(messages=USER))
    assert sleeps == []


def test_server_that_hangs_up_is_retried_then_answers() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([disconnect(), completion("back")]) as server:
        turn = make_model(server, sleeps).complete(ModelRequest(messages=USER))
    assert turn.text == "back" and len(sleeps) == 1


def test_broken_stream_is_retried_and_the_retry_is_used() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": f"part{n} "}}]} for n in range(4)]
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    shown: list[str] = []
    sleeps: list[float] = []
    with FakeOpenAIServer(
        [sse_reply(chunks, break_after=2), sse_reply([*chunks, finish])]
    ) as server:
        model = make_model(server, sleeps, stream=True)
        turn = model.complete(ModelRequest(messages=USER, on_text=shown.append))
    assert turn.text == "part0 part1 part2 part3 "
    assert shown[:2] == ["part0 ", "part1 "] and len(sleeps) == 1


def test_stream_without_finish_reason_is_a_failure_not_a_turn() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": "half an answ"}}]}]
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([sse_reply(chunks)] * 3) as server,
        pytest.raises(ModelError, match="without a finish reason"),
    ):
        make_model(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    assert len(server.requests) == 3


def test_slow_server_times_out_with_a_clear_error() -> None:
    sleeps: list[float] = []
    with FakeOpenAIServer([json_reply(completion("late"), delay=2.0)]) as server:
        model = make_model(server, sleeps, timeout=0.2, max_retries=0)
        with pytest.raises(ModelError, match="no reply from"):
            model.complete(ModelRequest(messages=USER))


def test_a_200_body_that_is_not_json_is_a_model_error() -> None:
    page = Reply(body=b"<html>502 Bad Gateway</html>", content_type="text/html")
    with FakeOpenAIServer([page]) as server, pytest.raises(ModelError, match="not JSON"):
        make_model(server, []).complete(ModelRequest(messages=USER))


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


@needs_wire
def test_provider_error_mid_run_stops_with_model_error_and_keeps_the_journal(
    tmp_path: Path,
) -> None:
    replies = [
        completion(tool_calls=[tool_call("lookup", {"key": "a"}, id="c1")]),
        *fixture_replies(WIRE / "error_openai_429_insufficient_quota.json"),
    ]
    trace = tmp_path / "run.jsonl"
    with FakeOpenAIServer(replies) as server, Journal(trace) as journal:
        model = make_model(server, [])
        result = Agent(model, [lookup], journal=journal).run("look up a")
    assert result.stop_reason == StopReason.MODEL_ERROR
    assert "You exceeded your current quota" in (result.error or "")
    events = [record["type"] for record in read_journal(trace)]
    assert "tool_result" in events and events[-1] == "stop"


@given(st.text(max_size=300))
def test_error_bodies_of_any_text_are_read_without_crashing(text: str) -> None:
    body = read_error_body(text)
    assert body.message and "\n" not in body.message


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    st.dictionaries(st.sampled_from(["error", "message", "code", "type", "detail"]), JSON_VALUES)
)
def test_error_bodies_of_any_json_shape_are_read_without_crashing(body: dict[str, Any]) -> None:
    read = read_error_body(json.dumps(body))
    assert isinstance(read.message, str) and read.message


def test_an_error_with_an_empty_message_reports_its_type() -> None:
    # what llama-cpp-python's server answers to tool_choice "required"
    body = '{"error":{"message":"","type":"internal_server_error","param":null,"code":null}}'
    assert read_error_body(body).message == "internal_server_error"


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("openai:m", "OPENAI_API_KEY"),
        ("deepseek:m", "DEEPSEEK_API_KEY"),
        ("responses:m", "OPENAI_API_KEY"),
    ],
)
def test_a_401_names_the_variable_the_key_comes_from(spec: str, variable: str) -> None:
    """As Anthropic's 401 names ANTHROPIC_API_KEY (issue 36)."""
    from reactloop.models import ModelSettings, resolve_model
    from reactloop.testing import FakeResponsesServer, responses_error

    refused = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    if spec.startswith("responses:"):
        server: Any = FakeResponsesServer([responses_error(401, "Incorrect API key provided")])
    else:
        server = FakeOpenAIServer([error_reply(401, refused)])
    with server:
        model = resolve_model(spec, ModelSettings(base_url=server.base_url, api_key="sk-wrong"))
        with pytest.raises(ProviderError) as raised:
            model.complete(ModelRequest(messages=[Message(role="user", content="hi")]))
    message = str(raised.value)
    assert "HTTP 401" in message and "Incorrect API key provided" in message
    assert message.endswith(f"(check {variable})")
    assert len(server.requests) == 1
