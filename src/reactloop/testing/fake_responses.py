"""A fake Responses API server for tests: real sockets on 127.0.0.1, scripted ``response``s.

Each ``POST /v1/responses`` takes the next scripted item (a ``response`` body, sent as JSON or,
for ``"stream": true``, as its events; a str, a text reply; or any ``Reply``: errors with
headers, broken streams, dropped connections) and is recorded::

    with FakeResponsesServer([response(calls=[function_call("calculator", {...})]), "4"]) as s:
        model = OpenAIResponsesModel(model="fake", base_url=s.base_url)
        ...
        assert s.requests[1].json["input"][-1]["type"] == "function_call_output"

Like the real API it first checks the request (``request_problem``) and answers 400
``invalid_request_error`` in the API's words when a ``function_call`` has no
``function_call_output``, an output answers no call, or a ``previous_response_id`` names no
stored response. Responses without an id get ``resp_<n>``; those of ``store: true``
requests are kept, so that ``previous_response_id`` continues them. ``check_requests=False``
turns the checks off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest
from reactloop.testing.openai_replies import Reply, json_reply
from reactloop.testing.responses_replies import (
    as_body,
    response_stream,
    responses_error,
    with_request_fields,
)

Script = Reply | Mapping[str, Any] | str
Responder = Callable[[RecordedRequest], "Script | None"]


class FakeResponsesServer(FakeOpenAIServer):
    """The server; use it as a context manager (or ``start()`` / ``stop()``)."""

    def __init__(
        self,
        replies: Iterable[Script] = (),
        *,
        responder: Responder | None = None,
        model: str = "fake-model",
        check_requests: bool = True,
        port: int = 0,
    ) -> None:
        super().__init__(model=model, port=port)
        self._script: list[Script] = list(replies)
        self._answer = responder
        self.check_requests = check_requests
        self.stored: dict[str, list[dict[str, Any]]] = {}  # response id -> input and output

    def start(self) -> FakeResponsesServer:
        super().start()
        return self

    def __enter__(self) -> FakeResponsesServer:
        return self.start()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def add(self, *replies: Script) -> FakeResponsesServer:
        with self._lock:
            self._script.extend(replies)
        return self

    def next_reply(self, request: RecordedRequest) -> Reply:
        body = _json_of(request)
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            problem = request_problem(body, self.stored) if self.check_requests else None
            item = self._script.pop(0) if self._script and problem is None else None
        if problem is not None:
            return responses_error(400, problem)
        if item is None and self._answer is not None:
            item = self._answer(request)
        if item is None:
            return responses_error(500, f"fake server: no scripted reply left for request {number}")
        found = as_body(item)
        if isinstance(found, Reply):
            return found
        found.setdefault("id", f"resp_{number}")
        found = with_request_fields(found, body)
        if body.get("store"):
            self._store(body, found)
        return response_stream(found) if body.get("stream") else json_reply(found)

    def _store(self, body: Mapping[str, Any], reply: Mapping[str, Any]) -> None:
        held = list(self.stored.get(str(body.get("previous_response_id")), []))
        held.extend(_list(body.get("input")))
        held.extend(_list(reply.get("output")))
        with self._lock:
            self.stored[str(reply["id"])] = held


def request_problem(body: Mapping[str, Any], stored: Mapping[str, list[Any]]) -> str | None:
    """What the real API would refuse in this request body, in its words; None if nothing."""
    previous = body.get("previous_response_id")
    if previous is not None and previous not in stored:
        return f"Previous response with id '{previous}' not found."
    items = [*stored.get(str(previous), []), *_list(body.get("input"))]
    calls = {i.get("call_id") for i in items if isinstance(i, Mapping) and _is(i, "function_call")}
    answered = set()
    for item in items:
        if isinstance(item, Mapping) and _is(item, "function_call_output"):
            if item.get("call_id") not in calls:
                call_id = item.get("call_id")
                return f"No tool call found for function call output with call_id {call_id}."
            answered.add(item.get("call_id"))
    for call_id in calls - answered:
        return f"No tool output found for function call {call_id}."
    return None


def _is(item: Mapping[str, Any], kind: str) -> bool:
    return item.get("type") == kind


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _json_of(request: RecordedRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body) if request.body else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
