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

__all__ = [
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "anthropic_error",
    "anthropic_fixture_replies",
    "completion",
    "disconnect",
    "error_reply",
    "event_stream",
    "fixture_replies",
    "free_port",
    "json_reply",
    "message",
    "request_problem",
    "sse_reply",
    "sse_text_reply",
    "stream_events",
    "thinking",
    "tool_call",
    "tool_use",
]
