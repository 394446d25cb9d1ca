"""Helpers for testing agents without a real provider: fake HTTP servers on 127.0.0.1.

See docs/testing.md. Nothing here is imported by ``import reactloop``.
"""

from reactloop.testing.anthropic_replies import (
    anthropic_error,
    anthropic_fixture_replies,
    event_stream,
    message,
    stream_events,
    thinking,
    tool_use,
)
from reactloop.testing.fake_anthropic import FakeAnthropicServer, request_problem
from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest, free_port
from reactloop.testing.fake_responses import FakeResponsesServer
from reactloop.testing.openai_replies import (
    Reply,
    completion,
    disconnect,
    error_reply,
    fixture_replies,
    json_reply,
    sse_reply,
    sse_text_reply,
    tool_call,
)
from reactloop.testing.responses_replies import (
    cut_off_call,
    failed_response,
    function_call,
    reasoning_item,
    refusal,
    response,
    response_events,
    response_stream,
    responses_error,
    responses_fixture_replies,
)

__all__ = [
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "FakeResponsesServer",
    "RecordedRequest",
    "Reply",
    "anthropic_error",
    "anthropic_fixture_replies",
    "completion",
    "cut_off_call",
    "disconnect",
    "error_reply",
    "event_stream",
    "failed_response",
    "fixture_replies",
    "free_port",
    "function_call",
    "json_reply",
    "message",
    "reasoning_item",
    "refusal",
    "request_problem",
    "response",
    "response_events",
    "response_stream",
    "responses_error",
    "responses_fixture_replies",
    "sse_reply",
    "sse_text_reply",
    "stream_events",
    "thinking",
    "tool_call",
    "tool_use",
]
