"""What a new user meets first: the time limit holds from the first call, no retry of what
cannot change, and errors that name the fix (issue 10, provider part)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import textwrap

import pytest

from reactloop.errors import ModelError, ProviderError, UsageError
from reactloop.messages import Message
from reactloop.models import resolve_model
from reactloop.models.base import ModelRequest
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer, Reply, error_reply, sse_reply, sse_text_reply

USER = [Message(role="user", content="q")]
NOT_SUPPORTED = "Automatic streaming tool choice is not supported"
ERROR_PAYLOAD = json.dumps({"error": {"message": NOT_SUPPORTED, "type": "ValueError"}})


def model_for(server: FakeOpenAIServer, sleeps: list[float], *, stream: bool) -> OpenAIChatModel:
    return OpenAIChatModel(
        model="m", base_url=server.base_url, provider="llamacpp", sleep=sleeps.append, stream=stream
    )


# --- the SDK is imported before the clock starts ------------------------------------------------

SILENT_RUN = textwrap.dedent(
    """
    import json, socket, sys, time
    from reactloop import Agent, Limits
    from reactloop.models.openai import OpenAIChatModel

    listener = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel does), never answers
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    imported_before = "openai" in sys.modules
    model = OpenAIChatModel(model="m", base_url=url, provider="llamacpp")
    imported_by_construction = "openai" in sys.modules
    agent = Agent(model, [], limits=Limits(max_seconds=0.5), protocol="native")
    started = time.monotonic()
    result = agent.run("q")
    print(json.dumps({
        "before": imported_before, "after": imported_by_construction,
        "seconds": time.monotonic() - started, "stop": result.stop_reason, "error": result.error,
    }))
    """
)


def test_the_sdk_is_imported_when_the_model_is_made_so_half_a_second_stays_half() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SILENT_RUN], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["before"] is False and report["after"] is True
    assert report["stop"] == "timeout", report
    assert "left in the run" in report["error"]
    assert report["seconds"] < 1.2  # the import alone costs 0.3-1.2 s of CPU: not in here


# --- what cannot change is not retried, and the error says what the server said ----------------


def test_a_200_stream_that_sends_nothing_is_not_retried_and_names_the_known_cause() -> None:
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([sse_reply([], done=False)] * 3) as server,
        pytest.raises(ModelError) as caught,
    ):
        model_for(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    message = str(caught.value)
    assert "sent nothing" in message and NOT_SUPPORTED in message and "--tool-choice" in message
    assert len(server.requests) == 1 and sleeps == [] and "gave up" not in message


@pytest.mark.parametrize(
    "stream_text",
    [
        f"event: error\ndata: {ERROR_PAYLOAD}\n\n",
        f"data: {ERROR_PAYLOAD}\n\n",
        f"event: error\ndata: {NOT_SUPPORTED}\n\n",
    ],
    ids=["error-event", "error-payload", "error-event-text"],
)
def test_an_error_the_server_streams_after_200_is_reported_as_said_and_not_retried(
    stream_text: str,
) -> None:
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([sse_text_reply(stream_text)] * 3) as server,
        pytest.raises(ProviderError, match=NOT_SUPPORTED) as caught,
    ):
        model_for(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    assert not caught.value.retryable and len(server.requests) == 1


def test_plain_text_in_a_200_event_stream_is_quoted_and_not_retried() -> None:
    body = f"ValueError: {NOT_SUPPORTED}\n".encode()
    reply = Reply(pieces=(body,), content_type="text/event-stream")
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([reply] * 3) as server,
        pytest.raises(ModelError, match=re.escape(f"it said: 'ValueError: {NOT_SUPPORTED}'")),
    ):
        model_for(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    assert len(server.requests) == 1


def test_a_stream_of_only_keep_alives_is_retried() -> None:
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([sse_reply([": keep-alive\n\n"], done=False)] * 3) as server,
        pytest.raises(ModelError, match=r"only keep-alives.*gave up after 3 attempts"),
    ):
        model_for(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    assert len(server.requests) == 3


def test_a_stream_that_stops_after_some_chunks_is_still_retried() -> None:
    chunks = [{"choices": [{"index": 0, "delta": {"content": "half"}}]}]
    sleeps: list[float] = []
    with (
        FakeOpenAIServer([sse_reply(chunks, done=False)] * 3) as server,
        pytest.raises(ModelError, match="gave up after 3 attempts"),
    ):
        model_for(server, sleeps, stream=True).complete(ModelRequest(messages=USER))
    assert len(server.requests) == 3


def test_refused_connection_on_another_host_is_still_retried() -> None:
    # 127.0.0.2 is this machine too, but not a name the adapter treats as "surely local":
    # only localhost, 127.0.0.1 and ::1 are, so a refusal elsewhere keeps its retries.
    with socket.socket() as probe:
        probe.bind(("127.0.0.2", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    model = OpenAIChatModel(model="m", base_url=f"http://127.0.0.2:{port}/v1", sleep=sleeps.append)
    with pytest.raises(ModelError, match="cannot reach"):
        model.complete(ModelRequest(messages=USER))
    assert len(sleeps) == 2


# --- hints where the mistake is plain ------------------------------------------------------------


def test_a_404_from_a_base_url_without_v1_asks_whether_v1_was_meant() -> None:
    with FakeOpenAIServer([error_reply(404, "Not Found")]) as server:
        url = server.url
        model = OpenAIChatModel(model="m", base_url=url, sleep=lambda _: None)
        with pytest.raises(ProviderError) as caught:
            model.complete(ModelRequest(messages=USER))
    assert caught.value.status == 404
    assert str(caught.value).endswith(f"HTTP 404: Not Found (did you mean {url}/v1?)")


def test_a_404_from_a_base_url_with_v1_has_no_such_hint() -> None:
    body = {"error": {"message": "model 'm' not found"}}
    with FakeOpenAIServer([error_reply(404, body)]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, sleep=lambda _: None)
        with pytest.raises(ProviderError, match=r"model 'm' not found$"):
            model.complete(ModelRequest(messages=USER))


@pytest.mark.parametrize(
    ("spec", "meant"),
    [
        ("gpt-4o-mini", "openai:gpt-4o-mini"),
        ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("deepseek-chat", "deepseek:deepseek-chat"),
        ("SmolLM2-135M.Q8_0.gguf", "local:SmolLM2-135M.Q8_0.gguf"),
        ("/models/qwen.gguf", "local:/models/qwen.gguf"),
    ],
)
def test_a_model_name_without_its_provider_suggests_the_spec(spec: str, meant: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_model(spec)
    assert str(caught.value).startswith(f"unknown model spec {spec!r}; did you mean {meant!r}?")


def test_an_unknown_spec_that_looks_like_nothing_lists_the_providers() -> None:
    with pytest.raises(UsageError, match=r"unknown model spec 'nonsense'; providers: .*openai"):
        resolve_model("nonsense")
