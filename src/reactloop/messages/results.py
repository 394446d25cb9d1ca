"""What a tool call produced (``ToolResult``), or why it did not run (``NotRun``)."""

from __future__ import annotations

from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Literal

from reactloop.support.fast_init import fast_init
from reactloop.support.json_encode import dumps


def not_executed(reason: str) -> str:
    """The error of a call that never ran: ``not executed: reason`` (refused before it started,
    cancelled, left unanswered). One spelling, read by the loop, the adapters and replay."""
    return f"not executed: {reason}"


UNANSWERED = not_executed("no result was recorded")
"""The error an adapter sends for a call of the history that has no result at all."""

NotRun = Literal[
    "tool_call_limit",  # the budget: the tool call limit was reached
    "time_limit",  # the budget: the run's time was up
    "loop_guard",  # the loop guard refused it (the run goes on)
    "loop_detected",  # the loop guard stopped the run on it
    "run_stopped",  # a later call of that turn
    "declined",  # the approver said no (or failed)
    "deferred",  # the approver put it off (it gets no result)
    "cancelled",  # the run was cancelled before it ran, or at its approval
    "stopped",  # left open when the run stopped (``not executed: <stop reason>``)
    "reply_cut_off",  # a call of a reply cut off at the output limit
    "reply_unreadable",  # a call of a reply that could not be read
    "uncertain",  # resumed: it may have run before, and was not run again
]
"""Why a call did not run: ``ToolResult.not_run``, written where the result is made."""


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """What running (or refusing) one tool call produced.

    It reaches the model as JSON: ``{"ok": true, "output": ...}`` or
    ``{"ok": false, "error": "..."}``, plus ``"truncated": true`` when output was cut.
    """

    call_id: str
    name: str
    ok: bool
    output: Any = None
    error: str | None = None
    truncated: bool = False
    full_output_path: str | None = None
    executed: bool = True
    seconds: float = 0.0
    not_run: NotRun | None = None  # why the call did not run (None: it ran, or failed as it ran)

    @classmethod
    def refused(cls, call_id: str, name: str, error: str, not_run: NotRun) -> ToolResult:
        """The result of a call that did not run: ``error`` for the model, ``not_run`` why."""
        return cls(call_id=call_id, name=name, ok=False, error=error, executed=False,
                   not_run=not_run)  # fmt: skip

    def to_content(self) -> str:
        """The JSON text the model sees."""
        if self.ok and not self.truncated:  # the common results, spelled as ``dumps`` would
            kind = type(self.output)
            if kind is str:
                return '{"ok": true, "output": ' + encode_basestring(self.output) + "}"
            if kind is int:
                return f'{{"ok": true, "output": {self.output}}}'
        body: dict[str, Any] = {"ok": self.ok}
        if self.ok:
            body["output"] = self.output
        else:
            body["error"] = self.error
        if self.truncated:
            body["truncated"] = True
            if self.full_output_path:
                body["full_output"] = self.full_output_path
        return dumps(body)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "call_id": self.call_id,
            "name": self.name,
            "ok": self.ok,
            "output": self.output,
            "error": self.error,
            "truncated": self.truncated,
            "full_output_path": self.full_output_path,
            "executed": self.executed,
            "seconds": self.seconds,
        }
        if self.not_run is not None:  # a call that did not run: why (``NotRun``)
            data["not_run"] = self.not_run
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolResult:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
