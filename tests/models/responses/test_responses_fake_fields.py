"""``FakeResponsesServer``'s response objects have every field a real one has (issue 36): the
fields of the recorded OpenAI responses in ``tests/wire_formats/responses/``, and those the Open
Responses specification requires, with the request's own values echoed, so that the official
openai SDK's ``Response`` model accepts them in strict mode, plain and streamed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from reactloop.testing import FakeResponsesServer
from reactloop.testing.responses_replies import function_call, response

RECORDED = Path(__file__).parents[2] / "wire_formats" / "responses"
# The Open Responses specification's required fields of a response object.
OPEN_RESPONSES_REQUIRED = {
    "id", "object", "created_at", "completed_at", "status", "incomplete_details", "model",
    "previous_response_id", "instructions", "output", "error", "tools", "tool_choice",
    "truncation", "parallel_tool_calls", "text", "top_p", "presence_penalty",
    "frequency_penalty", "top_logprobs", "temperature", "reasoning", "usage",
    "max_output_tokens", "max_tool_calls", "store", "background", "service_tier", "metadata",
    "safety_identifier", "prompt_cache_key",
}  # fmt: skip
TOOLS = [{"type": "function", "name": "add", "description": "Add two numbers.", "strict": False,
          "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}]  # fmt: skip
EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def recorded_fields() -> set[str]:
    names: set[str] = set()
    for path in RECORDED.glob("openai_*.json"):
        names |= set(json.loads(path.read_text()))
    return names


def scripted() -> list[dict[str, Any]]:
    call = function_call("add", {"a": 1}, call_id="call_1")
    return [response(calls=[call]), response("2"), response("cut", status="incomplete",
            incomplete="max_output_tokens")]  # fmt: skip


def test_a_plain_response_has_every_field_of_a_real_one_and_the_sdk_accepts_it_strictly() -> None:
    with FakeResponsesServer(scripted()) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        for _ in range(3):
            raw = client.responses.with_raw_response.create(
                model="fake-model", input="1+1?", tools=TOOLS, instructions="Be brief.",
                temperature=0.2, store=False,
            )  # fmt: skip
            body = json.loads(raw.content)
            assert recorded_fields() - set(body) == set()
            assert OPEN_RESPONSES_REQUIRED - set(body) == set()
            Response.model_validate(body, strict=True)
            assert body["tools"] == TOOLS  # the request's own, as the API echoes them
            assert (body["instructions"], body["temperature"], body["store"]) == (
                "Be brief.", 0.2, False)  # fmt: skip
            assert raw.parse().id == body["id"]


def test_every_lifecycle_event_of_a_stream_carries_a_whole_response() -> None:
    with FakeResponsesServer(scripted()) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        for _ in range(3):
            raw = client.responses.with_raw_response.create(
                model="fake-model", input="1+1?", tools=TOOLS, stream=True
            )
            lines = raw.http_response.read().decode().splitlines()
            events = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
            lifecycle = [e for e in events if "response" in e]
            assert len(lifecycle) == 2  # created, then completed or incomplete
            for event in events:
                EVENTS.validate_python(event, strict=True)
            for event in lifecycle:
                assert OPEN_RESPONSES_REQUIRED - set(event["response"]) == set()
                assert recorded_fields() - set(event["response"]) == set()
            assert lifecycle[0]["response"]["completed_at"] is None


@pytest.mark.parametrize("path", sorted(RECORDED.glob("openai_*.json")), ids=lambda p: p.stem)
def test_a_recorded_response_is_sent_as_it_was(path: Path) -> None:
    recorded = json.loads(path.read_text())
    with FakeResponsesServer([recorded], check_requests=False) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        raw = client.responses.with_raw_response.create(model="m", input="x")
        body = json.loads(raw.content)
    assert {k: body[k] for k in recorded} == recorded
