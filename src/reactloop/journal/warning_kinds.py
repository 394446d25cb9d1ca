"""``WarningKind``: the kinds of ``warning`` event the harness writes (``schema.py``)."""

from __future__ import annotations

import enum


class WarningKind(enum.StrEnum):
    """The kinds of ``warning`` the harness writes (an adapter's notices may add others)."""

    REPEAT = "repeat"  # the loop guard: the same call again
    NEAR_REPEAT = "near_repeat"  # ... nearly the same call again
    PINGPONG = "pingpong"  # ... two calls in turn
    CYCLE = "cycle"  # ... three calls in turn
    WIND_DOWN = "wind_down"  # the model told to answer now
    TRUNCATED = "truncated"  # a reply cut off at the output limit
    FORMAT_ERROR = "format_error"  # a reply that could not be read
    EMPTY_REPLY = "empty_reply"
    NOT_EXECUTED = "not_executed"  # calls no budget was left for
    DECLINED = "declined"  # the approver said no
    DEFERRED = "deferred"  # the approver put the call off
    BUDGET = "budget"  # a call refused by the tool-call or time limit
    PREFIX_CHANGED = "prefix_changed"  # an earlier message was rewritten
    MODEL_ERROR = "model_error"  # a model call failed
    INTERNAL_ERROR = "internal_error"  # an adapter raised what no adapter should
    BAD_USAGE = "bad_usage"  # a usage count that is not a token count, counted as 0
    TOOL_TIMEOUT = "tool_timeout"  # a tool given up on at the time limit
    INVALID_OUTPUT = "invalid_output"  # a typed answer its schema refused
    VERIFY_FAILED = "verify_failed"  # an answer its check refused
    COMPACTION_FAILED = "compaction_failed"
    SILENT_TRUNCATION = "silent_truncation"  # a server that cut the prompt unsaid
    REFUSAL = "refusal"  # an adapter's notice: why the model refused
    CACHE_TOO_SHORT = "cache_too_short"  # an adapter's notice: prompt caching cached nothing
