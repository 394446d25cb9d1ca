"""``ResumeState``: a journal's last run (``last_run``) as a resume finds it: why it is resumed
(``last_stop``), folded to the point it goes on from (``fold_to_resume``).

``fold_to_resume``: a run's events folded (``fold.py``) to the point a resume goes on from,
its last completed point: the last turn, its calls and their results. The events after it
are the preparation of a step that never got its turn (a budget notice, a wind-down, a
request): the resumed loop makes them again, the same way, so they are left out; but for the
decisions on pending calls, a sub-agent's ``child_stop``, and a typed answer's verdict. The
run's stop (``stop_reason``) reopens the calls it closed, as a ``resume`` event would.
``resume_record``: what the ``resume`` event records of that state; ``uncertain_notes``: what
a call that may have run is noted with.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.fold import advance, forget_open_checks, place_notice, reopen
from reactloop.journal.run_state import RunState
from reactloop.journal.schema import (
    ApprovalEvent,
    ChildStopEvent,
    ElicitationEvent,
    RequestEvent,
    ResumeEvent,
    RunStartEvent,
    StopEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStartEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import Limits
from reactloop.messages import Message

_DONE_POINTS = (
    TurnEvent,
    ToolCallEvent,
    ToolStartEvent,
    ElicitationEvent,
    ToolResultEvent,
    ApprovalEvent,
)
_NOTICE_WARNINGS = (WarningKind.FORMAT_ERROR, WarningKind.EMPTY_REPLY, WarningKind.TRUNCATED)
# after the last completed point, still folded: a decision, and a sub-agent that stopped (the
# call that ran it has no result yet: it was killed, or the child waits for a decision)
_SPENT_AFTER = (ApprovalEvent, ChildStopEvent)


@dataclass(kw_only=True)
class ResumeState(RunState):
    """The last run's state, and what a resume reads besides: its ``run_start`` as written
    (its task, instructions and limits read from it), why it is resumed, the journal's last
    ``t`` (where the resumed run's events go on)."""

    run_start: Mapping[str, Any] = field(default_factory=dict)
    why: str = "no_stop"  # the process died, or the stop reason it continues from
    t_end: float = 0.0

    @property
    def task(self) -> str:
        return str(self.run_start.get("task") or "")

    @property
    def instructions(self) -> str | None:
        instructions = self.run_start.get("instructions")
        return instructions if isinstance(instructions, str) else None

    @property
    def recorded_limits(self) -> Limits:
        """The limits the run started under; a ``UsageError`` for ones no ``Limits`` takes."""
        data = self.run_start.get("limits")
        if not isinstance(data, Mapping):
            return Limits()
        names = typing.get_type_hints(Limits)
        try:
            return Limits(**{k: v for k, v in data.items() if k in names})
        except (TypeError, ValueError) as exc:
            raise UsageError(f"the journal's limits are invalid: {exc}") from None


def last_run(events: Sequence[JournalEvent]) -> int | None:
    """Where the journal's last run starts (its ``run_start``), or None: it has none."""
    starts = [i for i, event in enumerate(events) if isinstance(event, RunStartEvent)]
    return starts[-1] if starts else None


def last_stop(run: Sequence[JournalEvent]) -> tuple[StopEvent | None, int]:
    """The run's last ``stop`` and where it is; None (at ``len(run)``) when it has none, or
    a later ``resume`` supersedes it (the resumed run was killed)."""
    stops = [(i, e) for i, e in enumerate(run) if isinstance(e, StopEvent)]
    if not stops or any(isinstance(e, ResumeEvent) for e in run[stops[-1][0] + 1 :]):
        return None, len(run)
    at, stop = stops[-1]
    return stop, at


def fold_to_resume(
    run: Sequence[JournalEvent], state: RunState, stop_at: int, stop_reason: str | None
) -> RunState:
    """``run`` (from its ``run_start``; its last ``stop`` at ``stop_at``) folded into ``state``."""
    done = _last_done_point(run, stop_at)
    for event in run[: done + 1]:
        advance(state, event)
    place_notice(state)
    seconds, state.notices = state.seconds, []
    for event in run[done + 1 :]:
        if isinstance(event, _SPENT_AFTER) or (state.turn_handled and _invalid_answer(event)):
            advance(state, event)
    if not state.messages:
        state.messages = _opening(run)
    if stop_reason is not None:
        reopen(state, stop_reason)
    forget_open_checks(state)  # the resumed loop judges them again
    # an uncertain call counts again when it runs again (or once it is answered without)
    state.counts.tool_calls -= sum(c.state == "uncertain" for c in state.calls)
    state.seconds = state.counts.seconds_before = seconds  # the resumed run's clock goes on
    return state


def _last_done_point(run: Sequence[JournalEvent], stop_at: int) -> int:
    done = 0
    for index, event in enumerate(run[:stop_at]):
        if isinstance(event, _DONE_POINTS) or (
            isinstance(event, WarningEvent) and event.kind in _NOTICE_WARNINGS
        ):
            done = index
    return done


def _invalid_answer(event: JournalEvent) -> bool:
    return isinstance(event, WarningEvent) and event.kind is WarningKind.INVALID_OUTPUT


def _opening(run: Sequence[JournalEvent]) -> list[Message]:
    """A run killed before its first turn: the messages up to its task, as first sent (none
    without a request: the resumed loop adds the task itself)."""
    for event in run:
        if isinstance(event, RequestEvent):
            messages = [Message.from_dict(m) for m in event.messages_new]
            tasks = [i for i, m in enumerate(messages) if m.kind == "task"]
            return messages[: tasks[-1] + 1] if tasks else []
    return []


def uncertain_notes(state: RunState, created: datetime | None) -> dict[str, str]:
    """For each uncertain call, the note its approver (or the model) is given: when it started."""
    notes = {}
    for open_call in state.calls:
        if open_call.state == "uncertain":
            when = _when(created, open_call.started_t)
            notes[open_call.call.id] = (
                f"this call may already have run (started at {when}, no result recorded)"
            )
    return notes


def _when(created: datetime | None, t: float | None) -> str:
    if created is None or t is None:
        return f"{t or 0.0:.3f} s into the journal"
    return (created + timedelta(seconds=t)).isoformat(timespec="seconds")


def resume_record(
    state: RunState, why: str, torn: Path | None, torn_bytes: int, limits: dict[str, Any]
) -> ResumeEvent:
    """The ``resume`` event: why, from which step, what is known of the calls in flight, and
    the limits the resumed run goes on with."""
    return ResumeEvent(
        why=why,
        from_step=state.counts.step,
        model_calls=state.counts.model_calls,
        tool_calls=state.counts.tool_calls,
        calls=[
            {"call_id": c.call.id, "name": c.call.name, "state": c.state, "started_t": c.started_t}
            for c in state.calls
        ],
        torn=None if torn is None else {"file": str(torn), "bytes": torn_bytes},
        limits=limits,
    )
