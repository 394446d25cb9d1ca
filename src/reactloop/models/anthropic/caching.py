"""Prompt caching (``--cache``): breakpoints on the stable prefix, and why hits may be zero.

``add_breakpoints`` marks, with ``cache_control: {"type": "ephemeral"}``, the last tool, the
system prompt and the last block of the last message (every text content is sent as a block,
so a message renders alike whether it carries the mark or not). The loop's history only grows,
and each message renders the same way at every step, so everything before a breakpoint is the
same in the next request: step N writes the prefix, step N+1 reads it (the API looks for earlier
breakpoints by itself). The body given is not changed; a marked copy is returned.

Anthropic caches nothing shorter than a minimum that depends on the model (1,024 tokens for
most, more for some: ``minimum_cacheable``); ``cache_notice`` says so, as a turn notice that
the run makes a warning once, instead of letting a run report silent zero hits.
"""

from __future__ import annotations

import copy
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
# Model name prefixes and the shortest prefix (tokens) each caches; the rest: 1,024.
MINIMUM_CACHEABLE = (
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
DEFAULT_MINIMUM = 1024
CACHE_NOTICE = "cache_too_short"  # the kind of the run warning ``cache_notice`` gives
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})  # the API refuses cache_control there


def minimum_cacheable(model: str) -> int:
    for prefix, tokens in MINIMUM_CACHEABLE:
        if model.startswith(prefix):
            return tokens
    return DEFAULT_MINIMUM


def add_breakpoints(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` with the three breakpoints (where there is something to mark)."""
    marked = dict(body)
    if body.get("tools"):
        tools = [dict(tool) for tool in body["tools"]]
        tools[-1]["cache_control"] = dict(EPHEMERAL)
        marked["tools"] = tools
    system = body.get("system")
    if isinstance(system, str) and system:
        marked["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
    messages = [_as_blocks(message) for message in body.get("messages") or ()]
    if messages:
        marked["messages"] = [*messages[:-1], _marked_message(messages[-1])]
    return marked


def _as_blocks(message: dict[str, Any]) -> dict[str, Any]:
    """A text content as one text block: the same form whether it is marked or not."""
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content}]}
    return message


def _marked_message(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks = copy.copy(content) if isinstance(content, list) else []
    if not blocks or blocks[-1].get("type") in UNMARKABLE:
        return message
    last: dict[str, Any] = dict(blocks[-1])
    last["cache_control"] = dict(EPHEMERAL)
    blocks[-1] = last
    return {**message, "content": blocks}


def cache_notice(model: str, written: int, read: int, prompt_tokens: int) -> str | None:
    """Why caching wrote and read nothing for a prompt of ``prompt_tokens``, if it is the size."""
    minimum = minimum_cacheable(model)
    if written or read or prompt_tokens >= minimum:
        return None
    return (
        f"prompt caching is on, but nothing was cached: the prompt has {prompt_tokens} tokens "
        f"and {model or 'this model'} caches only prefixes of at least {minimum} tokens "
        "(zero cache hits until the prompt grows past that; see docs/anthropic.md)"
    )
