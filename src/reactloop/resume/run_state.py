"""``rebuild``: the state a resume goes on from: the journal's last run, checked resumable
(its stop is one a run can go on from), folded to its last completed point
(``journal/resume_point.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.errors import JournalError, UsageError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import events_of
from reactloop.journal.resume_point import fold_to_resume
from reactloop.journal.run_counts import Pricer
from reactloop.journal.run_state import RunState
from reactloop.journal.schema import ResumeEvent, RunStartEvent, StopEvent

RESUMABLE = (
    "awaiting_approval",
    "timeout",
    "max_model_calls",
    "max_tool_calls",
    "max_tokens",
    "cancelled",
)


@dataclass(kw_only=True)
class ResumeState(RunState):
    run_start: Mapping[str, Any] = field(default_factory=dict)
    why: str = "no_stop"  # the process died, or the stop reason it continues from
    t_end: float = 0.0  # the journal's last ``t``

    @property
    def task(self) -> str:
        return str(self.run_start.get("task") or "")


def rebuild(events: Sequence[Mapping[str, Any]], price: Pricer | None = None) -> ResumeState:
    """The state of the journal's last run (its cost at ``price``); a ``UsageError`` when it
    cannot go on, also for an event of a shape the loop never writes (a journal damaged by
    hand or by a disk)."""
    try:
        typed = events_of(events)
        starts = [i for i, event in enumerate(typed) if isinstance(event, RunStartEvent)]
        if not starts:
            raise UsageError("the journal has no run_start: there is no run to resume")
        run = typed[starts[-1] :]
        why, stop_at = _why(run)
        start, t_end = events[starts[-1]], run[-1].t or 0.0
        state = ResumeState(run_start=start, why=why, t_end=t_end, price=price)
        fold_to_resume(run, state, stop_at, None if why == "no_stop" else why)
        return state
    except JournalError as exc:
        raise UsageError(f"the journal is damaged: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise UsageError(f"the journal is damaged: {type(exc).__name__}: {exc}") from None


def _why(run: Sequence[JournalEvent]) -> tuple[str, int]:
    """Why the run is resumed, and where its last ``stop`` is (len(run) without one)."""
    stops = [(i, e) for i, e in enumerate(run) if isinstance(e, StopEvent)]
    if not stops or any(isinstance(e, ResumeEvent) for e in run[stops[-1][0] + 1 :]):
        return "no_stop", len(run)
    last_stop, stop = stops[-1]
    if stop.stop_reason == "final_answer":
        raise UsageError("the run is finished (final_answer): there is nothing to resume")
    if stop.stop_reason not in RESUMABLE:
        reason, resumable = stop.stop_reason, ", ".join(RESUMABLE)
        raise UsageError(f"a run that stopped {reason} cannot be resumed ({resumable})")
    return stop.stop_reason, last_stop
