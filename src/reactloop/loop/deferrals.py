"""``Deferrals``: the calls of a turn that wait for a person's decision.

A call the approver put off (``Defer``) gets no result now; nor does an agent tool's call
whose sub-agent waits for a decision on calls of its own. The run then stops
``awaiting_approval`` with them all (``pending``: this run's first, then its sub-agents').
"""

from __future__ import annotations

from collections.abc import Callable

from reactloop.journal.warning_kinds import WarningKind
from reactloop.result import PendingCall
from reactloop.tools.prepared import PreparedCall


class Deferrals:
    def __init__(self, warn: Callable[..., None]) -> None:
        self.warn = warn
        self.own: list[PreparedCall] = []  # put off by this run's approver
        self.below: dict[str, tuple[PendingCall, ...]] = {}  # agent calls, by call id

    @property
    def waits(self) -> bool:
        """Whether a call of the turn waits for a decision (here, or in a sub-agent)."""
        return bool(self.own or self.below)

    def running_waits(self, call_id: str, pending: tuple[PendingCall, ...]) -> None:
        """The running call ``call_id`` (an agent tool's) waits for decisions on ``pending``,
        calls of its sub-agent: it gets no result now (``reactloop.subagents``)."""
        self.below[call_id] = pending
        paths = ", ".join(sorted({p.agent_path for p in pending}))
        self.warn(WarningKind.DEFERRED, f"a call in {paths} waits for approval", call_id=call_id)

    def holds(self, call_id: str) -> bool:
        """Whether the call ``call_id`` waits: it gets no result now."""
        return call_id in self.below or any(p.id == call_id for p in self.own)

    def pending(self) -> tuple[PendingCall, ...]:
        """The calls put off, for the ``stop`` event and ``RunResult.pending``."""
        own = (PendingCall(id=p.id, name=p.name, arguments=p.arguments) for p in self.own)
        return (*own, *(p for below in self.below.values() for p in below))
