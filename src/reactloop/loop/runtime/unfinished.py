"""The results of calls that did not finish: given up on at the time limit, interrupted, or
never started. A result the runtime makes itself, never the toolbox: the tool did not answer.
"""

from __future__ import annotations

import time

from reactloop.messages import ToolResult
from reactloop.tools.prepared import PreparedCall

ABANDONED = "abandoned at the time limit"
CANCELLED_AT_LIMIT = "cancelled at the time limit"
GAVE_UP = (ABANDONED, CANCELLED_AT_LIMIT)  # how the error of a call given up on begins


def abandoned(prepared: PreparedCall) -> ToolResult:
    """A sync call still running at the deadline: Python cannot stop its thread."""
    message = f"{ABANDONED}: the tool was still running; whatever it returns is discarded"
    return ran_without_result(prepared, message)


def cancelled_at_limit(prepared: PreparedCall) -> ToolResult:
    """An async call still running at the deadline, its task cancelled."""
    return ran_without_result(prepared, f"{CANCELLED_AT_LIMIT}: the tool was still running")


def interrupted(prepared: PreparedCall, why: str) -> ToolResult:
    """A call a Ctrl-C or the run's cancel stopped while it ran (``why``)."""
    return ran_without_result(prepared, f"cancelled: {why}")


def not_started(prepared: PreparedCall) -> ToolResult:
    """A call the run was cancelled before: it never ran."""
    error = "cancelled: the run was cancelled before it ran"
    return ToolResult.refused(prepared.id, prepared.name, error, "cancelled")


def late(prepared: PreparedCall, deadline: float | None) -> bool:
    """Whether the call ended after ``deadline``, its result then discarded; a tool that
    bounds its own time (``Tool.bounded``) says itself how it ended."""
    return (
        deadline is not None
        and time.monotonic() > deadline
        and not (prepared.tool is not None and prepared.tool.bounded)
    )


def ran_without_result(prepared: PreparedCall, message: str) -> ToolResult:
    """The error result of a call that started (it may have had effects) but gave none."""
    return ToolResult(
        call_id=prepared.id, name=prepared.name, ok=False, error=message, executed=True
    )
