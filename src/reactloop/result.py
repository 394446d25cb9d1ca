"""``RunResult``: what a run produced, whatever way it ended."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reactloop.limits import StopReason
from reactloop.messages import Message, Usage


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingCall:
    """A call that waits for a person's decision (a run stopped ``awaiting_approval``): its
    id, its tool, and its arguments decoded (None when they are not a JSON object). A call of
    a sub-agent has its ``agent_path`` (``/coder#1``), and its id is the ids of the calls that
    lead to it, from the root's agent call down, joined by ``/`` (``call_0_0/call_1_0``): the
    key of its decision for ``Agent.resume``."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    agent_path: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = {"call_id": self.id, "name": self.name, "arguments": self.arguments}
        return data | {"agent_path": self.agent_path} if self.agent_path else data


@dataclass(frozen=True, slots=True)
class Stop:
    """How a run ends: the reason, the answer (if any), what went wrong (if anything),
    whether the answer was forced (the model was told to answer now, without tools), and the
    answer as a typed value when the run has an output type; ``pending``: the calls that wait
    for approval (``awaiting_approval``)."""

    reason: StopReason
    answer: str | None = None
    error: str | None = None
    forced: bool = False
    output: Any = None
    error_kind: str | None = None
    pending: tuple[PendingCall, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """The answer (or None), why the run stopped, what it spent, and the whole history.

    ``error`` explains stops other than ``final_answer`` (the provider's message for
    ``model_error``, the loop found for ``loop_detected``, ...). A run stopped by
    ``loop_detected`` may still carry an answer: before it ends, the model is told to answer
    once more, without tools. ``forced`` is True when the answer came from such a call, or
    from a call told to answer now because a budget ran out (wind-down, tool choice
    ``none``): an answer to check, not a finished task. ``trace`` is the journal path
    when the run was journaled to a file; ``cost`` is in dollars when a price was given.
    ``output`` is the answer as a validated value of the agent's ``output_type`` (None without
    one, or when the run gave no valid answer); ``answer`` stays its text. ``error_kind`` says
    what kind of model failure ended a ``model_error`` run (``auth``, ``rate_limit``,
    ``context_length``, ``server``, ``connection``…: ``reactloop.ERROR_KINDS``), for code
    that reacts to it; None for every other stop. ``pending`` lists the calls that wait for a
    person's decision when the run stopped ``awaiting_approval`` (``Agent.resume`` goes on).
    """

    answer: str | None
    stop_reason: StopReason
    model_calls: int
    tool_calls: int
    usage: Usage
    history: tuple[Message, ...]
    seconds: float
    error: str | None = None
    trace: str | None = None
    cost: float | None = None
    warnings: tuple[str, ...] = ()
    forced: bool = False
    output: Any = None
    error_kind: str | None = None
    pending: tuple[PendingCall, ...] = ()

    @property
    def ok(self) -> bool:
        return self.answer is not None

    def __repr__(self) -> str:
        """Every field but the history, which is shown by its length: a long run's history
        is megabytes of text (``asyncio.run`` itself formats its result's ``repr``)."""
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _REPR_FIELDS)
        return f"RunResult({shown}, history=<{len(self.history)} messages>)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "stop_reason": str(self.stop_reason),
            "forced": self.forced,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "usage": self.usage.to_dict(),
            "cost": self.cost,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "error_kind": self.error_kind,
            "trace": self.trace,
            "warnings": list(self.warnings),
            "pending": [call.to_dict() for call in self.pending],
        }


_REPR_FIELDS = tuple(name for name in RunResult.__dataclass_fields__ if name != "history")
