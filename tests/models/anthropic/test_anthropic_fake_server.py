"""The fake Anthropic server of ``reactloop.testing``, checked with plain httpx and the SDK."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest

from reactloop.testing import RecordedRequest
from reactloop.testing.anthropic_replies import (
    anthropic_error,
    message,
    stream_events,
    thinking,
    tool_use,
)
from reactloop.testing.fake_anthropic import FakeAnthropicServer, request_problem

USER = {"role": "user", "content": "hi"}


def post(server: FakeAnthropicServer, body: Any) -> httpx.Response:
    return httpx.post(f"{server.base_url}/v1/messages", json=body, timeout=10)


def test_the_official_sdk_reads_its_replies_json_and_streamed() -> None:
    reply = message("Paris", content=[thinking("hmm", "sig")])
    with FakeAnthropicServer([reply, reply]) as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        whole = client.messages.create(model="m", max_tokens=10, messages=[USER])  # type: ignore[list-item]
        with client.messages.stream(model="m", max_tokens=10, messages=[USER]) as stream:  # type: ignore[list-item]
            streamed = stream.get_final_message()
    assert whole.content[1].type == "text" and whole.content[1].text == "Paris"
    assert streamed.model_dump(exclude_none=True) == whole.model_dump(exclude_none=True)
    assert server.requests[1].json["stream"] is True


def test_running_out_of_script_is_an_anthropic_shaped_500() -> None:
    with FakeAnthropicServer() as server:
        response = post(server, {"max_tokens": 1, "messages": [USER]})
    assert response.status_code == 500
    assert response.json()["type"] == "error"
    assert "no scripted reply left for request 1" in response.json()["error"]["message"]


def test_a_responder_answers_when_the_script_is_empty() -> None:
    def echo(request: RecordedRequest) -> dict[str, Any]:
        return message(f"you sent {len(request.json['messages'])} message(s)")

    with FakeAnthropicServer(responder=echo) as server:
        reply = post(server, {"max_tokens": 1, "messages": [USER]}).json()
    assert reply["content"][0]["text"] == "you sent 1 message(s)"


def test_errors_carry_their_headers() -> None:
    error = anthropic_error(429, "rate_limit_error", "slow", headers={"retry-after": "2"})
    with FakeAnthropicServer([error]) as server:
        response = post(server, {"max_tokens": 1, "messages": [USER]})
    assert response.status_code == 429 and response.headers["retry-after"] == "2"
    assert response.json()["error"] == {"type": "rate_limit_error", "message": "slow"}


def test_a_refused_request_does_not_use_up_the_script() -> None:
    uses = {"role": "assistant", "content": [tool_use("t", id="toolu_1")]}
    with FakeAnthropicServer([message("kept")]) as server:
        refused = post(server, {"max_tokens": 1, "messages": [USER, uses, USER]})
        assert refused.status_code == 400 and server.pending == 1
    assert "`tool_use` ids were found without `tool_result`" in refused.json()["error"]["message"]


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], "non-empty"),
        ([USER, {"role": "assistant", "content": []}, USER], "non-empty content"),
        (
            [
                USER,
                {"role": "assistant", "content": [tool_use("t", id="toolu_1")]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"},
                        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "y"},
                    ],
                },
            ],
            "unexpected `tool_use_id`",
        ),
        ([{"role": "tool", "content": "x"}], "role"),
    ],
)
def test_request_checks(messages: list[Any], says: str) -> None:
    problem = request_problem({"max_tokens": 1, "messages": messages})
    assert problem is not None and says in problem


def test_thinking_must_come_back_first_and_unchanged() -> None:
    block = thinking("plan", "sig-1")
    use = tool_use("t", id="toolu_1")
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
    body: dict[str, Any] = {"max_tokens": 1, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    kept = [USER, {"role": "assistant", "content": [block, use]}, result]
    assert request_problem({**body, "messages": kept}, {"sig-1"}) is None
    dropped = [USER, {"role": "assistant", "content": [use]}, result]
    assert "Expected `thinking`" in (request_problem({**body, "messages": dropped}) or "")
    changed = [USER, {"role": "assistant", "content": [dict(block, signature="x"), use]}, result]
    assert "Invalid `signature`" in (
        request_problem({**body, "messages": changed}, {"sig-1"}) or ""
    )


def test_the_server_learns_the_signatures_it_sends() -> None:
    reply = message(content=[thinking("plan", "sig-json")])
    with FakeAnthropicServer([reply, reply]) as server:
        post(server, {"max_tokens": 1, "messages": [USER]})
        post(server, {"max_tokens": 1, "messages": [USER], "stream": True})
    assert server.signatures == {"sig-json"}


def test_stream_events_fold_back_into_the_message() -> None:
    reply = message("a longer text than one piece", content=[tool_use("t", {"k": [1, 2]})])
    events = stream_events(reply, piece=4)
    assert events[0]["type"] == "message_start" and events[-1] == {"type": "message_stop"}
    text = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    arguments = "".join(
        e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta"
    )
    assert text == "a longer text than one piece" and json.loads(arguments) == {"k": [1, 2]}
