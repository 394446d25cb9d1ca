"""The fake OpenAI-compatible server of ``reactloop.testing``, checked with plain httpx."""

from __future__ import annotations

import httpx
import pytest

from reactloop.testing import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    completion,
    disconnect,
    error_reply,
    sse_reply,
    sse_text_reply,
)


def post(server: FakeOpenAIServer, body: object) -> httpx.Response:
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=10)


def test_replies_in_order_and_records_every_request() -> None:
    with FakeOpenAIServer(["first", completion("second")]) as server:
        one = post(server, {"n": 1}).json()
        two = post(server, {"n": 2}).json()
        assert server.pending == 0
    assert one["choices"][0]["message"]["content"] == "first"
    assert two["choices"][0]["message"]["content"] == "second"
    assert [r.json for r in server.requests] == [{"n": 1}, {"n": 2}]
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["content-type"] == "application/json"


def test_error_status_with_headers() -> None:
    with FakeOpenAIServer(
        [error_reply(429, {"error": {"message": "slow"}}, headers={"retry-after": "2"})]
    ) as server:
        response = post(server, {})
    assert response.status_code == 429 and response.headers["retry-after"] == "2"
    assert response.json()["error"]["message"] == "slow"


def test_running_out_of_script_is_a_500_that_says_so() -> None:
    with FakeOpenAIServer() as server:
        response = post(server, {})
    assert response.status_code == 500
    assert "no scripted reply left for request 1" in response.json()["error"]["message"]


def test_responder_answers_when_the_script_is_empty() -> None:
    def echo(request: RecordedRequest) -> Reply:
        return Reply(body=request.body)

    with FakeOpenAIServer(responder=echo) as server:
        assert post(server, {"x": 1}).json() == {"x": 1}


def test_models_endpoint_does_not_use_the_script() -> None:
    with FakeOpenAIServer(["kept"], model="tiny") as server:
        listing = httpx.get(f"{server.base_url}/models", timeout=10).json()
        assert server.pending == 1
    assert listing["data"][0]["id"] == "tiny"


def test_sse_stream_of_chunks_ends_with_done() -> None:
    with FakeOpenAIServer([sse_reply([{"a": 1}, "data: raw\n\n"])]) as server:
        text = post(server, {}).text
    assert text == 'data: {"a": 1}\n\ndata: raw\n\ndata: [DONE]\n\n'


def test_exact_sse_text_is_sent_unchanged() -> None:
    wire = ": keep-alive\n\ndata: {}\n\ndata: [DONE]"
    with FakeOpenAIServer([sse_text_reply(wire)]) as server:
        assert post(server, {}).text == wire


def test_broken_stream_closes_mid_body() -> None:
    with (
        FakeOpenAIServer([sse_reply([{"n": n} for n in range(5)], break_after=2)]) as server,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        post(server, {})


def test_disconnect_answers_nothing() -> None:
    with (
        FakeOpenAIServer([disconnect(), "after"]) as server,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        post(server, {})
        assert post(server, {}).json()["choices"][0]["message"]["content"] == "after"


def test_the_port_is_free_again_after_the_server_stops() -> None:
    server = FakeOpenAIServer().start()
    url = server.base_url
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/chat/completions", json={}, timeout=5)
