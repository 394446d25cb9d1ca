"""Helpers for testing agents without a real provider: fake HTTP servers on 127.0.0.1.

See docs/testing.md. Nothing here is imported by ``import reactloop``.
"""

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
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "completion",
    "disconnect",
    "error_reply",
    "fixture_replies",
    "free_port",
    "json_reply",
    "sse_reply",
    "sse_text_reply",
    "tool_call",
]
