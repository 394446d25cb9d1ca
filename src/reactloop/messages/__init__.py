"""Vendor-neutral values that flow through the loop.

Every type here is a frozen, keyword-only dataclass (with ``support.fast_init``'s faster
``__init__`` for the ones the loop makes every step). Adapters translate between these and a
provider's wire format; the loop never sees a wire format. ``raw`` fields keep what a provider
sent (for the journal and for adapters that must echo a message unchanged); the loop never
reads them. Every name is imported from here, ``reactloop.messages``.

- ``calls.py``: ``ToolSpec`` (what the model is told about a tool), ``ToolCall``, ``own_call_id``;
  ``decode_arguments`` and ``call_key`` (a call's loop-guard key, from the call alone)
- ``results.py``: ``ToolResult``, ``NotRun`` (why a call did not run), ``not_executed``
- ``message.py``: ``Message``, one entry of the history, and its ``Role``
- ``tokens.py``: ``Usage`` and the one reader of token counts from outside
- ``turns.py``: ``ModelTurn``, one reply of a model parsed, and ``ServerToolSearch``
"""

from __future__ import annotations

from reactloop.messages.calls import ToolCall, ToolSpec, own_call_id
from reactloop.messages.message import Message, Role
from reactloop.messages.results import UNANSWERED, NotRun, ToolResult, not_executed
from reactloop.messages.tokens import MAX_TOKEN_COUNT, Usage, count_of, exact_count, token_count
from reactloop.messages.turns import FinishReason, ModelTurn, ServerToolSearch

__all__ = [
    "MAX_TOKEN_COUNT",
    "UNANSWERED",
    "FinishReason",
    "Message",
    "ModelTurn",
    "NotRun",
    "Role",
    "ServerToolSearch",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "count_of",
    "exact_count",
    "not_executed",
    "own_call_id",
    "token_count",
]
