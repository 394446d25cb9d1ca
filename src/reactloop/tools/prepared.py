"""``PreparedCall``: a tool call decoded and validated once, read by everything that judges it.

The budget, the loop guard (``key``), the approver (``arguments``) and the executor
(``values``) all read the same value, so the arguments that were judged are the arguments
that run. A call that cannot run carries its reason in ``error``, worded for the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from reactloop.errors import describe_exception
from reactloop.messages import ToolCall
from reactloop.messages.calls import ArgumentsError, call_key, decode_arguments
from reactloop.tools.base import Tool

if TYPE_CHECKING:
    from pydantic import ValidationError


class PreparedCall(NamedTuple):
    """``call`` as the model wrote it; ``tool`` (None when unknown); ``arguments``, the decoded
    JSON object (None when the text is not one); ``values``, the validated keyword arguments
    the function gets (None when the call cannot run, and then ``error`` says why); ``key``,
    the tool name and canonical arguments the loop guard compares. Immutable, and a tuple
    because one is made for every call."""

    call: ToolCall
    tool: Tool | None
    arguments: dict[str, Any] | None
    values: dict[str, Any] | None
    error: str | None
    key: str

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def read_only(self) -> bool:
        return self.tool is not None and self.tool.read_only


def prepare(call: ToolCall, tool: Tool | None, unknown: str) -> PreparedCall:
    """Decode and validate ``call`` for ``tool``; ``unknown`` is the error when tool is None."""
    try:
        arguments = decode_arguments(call.arguments)
    except ArgumentsError as exc:
        key = call_key(call.name, call.arguments, None)
        return PreparedCall(call, tool, None, None, unknown if tool is None else str(exc), key)
    key = call_key(call.name, call.arguments, arguments)
    if tool is None:
        return PreparedCall(call, None, arguments, None, unknown, key)
    try:
        values = tool.validate(arguments)
    except _validation_error() as exc:
        return PreparedCall(call, tool, arguments, None, invalid_arguments(exc), key)
    except Exception as exc:  # a validator of the tool's own that raised something else
        error = f"invalid arguments: {describe_exception(exc)}"
        return PreparedCall(call, tool, arguments, None, error, key)
    return PreparedCall(call, tool, arguments, values, None, key)


def invalid_arguments(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "invalid arguments: " + "; ".join(parts)


@functools.cache
def _validation_error() -> type[ValidationError]:
    from pydantic import ValidationError  # pydantic loads on first use, not on import

    return ValidationError


class Defer(NamedTuple):
    """An approver's answer that puts the decision off: the call does not run now, and the run
    stops ``awaiting_approval`` with it pending, for a person to decide later
    (``reactloop approve``, then ``reactloop resume``; or ``Agent.resume(decisions=...)``)."""

    reason: str = "waits for a person's approval"


Approver = Callable[[PreparedCall, Tool], "bool | str | Defer"]
"""``approve(call, tool)``: True runs the call; False or a reason string declines it; a
``Defer()`` puts it off (the run stops ``awaiting_approval``). ``call`` is the prepared call:
``call.arguments`` holds the decoded arguments that will run. An approver asked about a call
of a resumed run that may already have run is given ``note=`` (why) when it takes that
keyword."""
