"""``resume_run``: an agent's settings and a journal → the resumed run, to its ``stop``.

Everything is checked before the journal is touched (``checks.py``): the journal itself, its
last run (``rebuild``: resumable, then folded to the point it goes on from,
``journal/resume_point.py``), and that the agent is the one that recorded it. Then the torn
last line (if any) is set aside, the journal is opened to append, and the ``ResumedLoop``
runs from the folded state, under the recorded limits (or those given) and instructions.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reactloop.approval import Decision, decision_data
from reactloop.errors import JournalError, UsageError
from reactloop.journal.one_run import children_started
from reactloop.journal.reader import events_of
from reactloop.journal.recorded import Recorded, set_aside_torn
from reactloop.journal.resume_point import (
    ResumeState,
    fold_to_resume,
    last_run,
    last_stop,
    resume_record,
    uncertain_notes,
)
from reactloop.journal.run_counts import Pricer
from reactloop.journal.schema import ApprovalEvent
from reactloop.journal.writer import Journal
from reactloop.limits import Limits
from reactloop.loop.settings import RunSettings
from reactloop.loop.tree_budget import TreePlace
from reactloop.result import RunResult
from reactloop.resume.checks import check_agent, check_journal, resumable
from reactloop.resume.resumed_loop import ResumedLoop


def prepare_resume(path: str | Path, price: Pricer | None = None) -> tuple[Recorded, ResumeState]:
    """The journal and the state of its last run (its cost at ``price``); a ``UsageError``
    in one line, and the file unchanged, when it cannot be resumed."""
    recorded = check_journal(path)
    try:
        state = rebuild(recorded.events, price)
    except UsageError as exc:
        raise UsageError(f"cannot resume {recorded.path}: {exc}") from None
    return recorded, state


def rebuild(events: Sequence[Mapping[str, Any]], price: Pricer | None = None) -> ResumeState:
    """The state of the journal's last run (its cost at ``price``); a ``UsageError`` when it
    cannot go on, also for an event of a shape the loop never writes (a journal damaged by
    hand or by a disk)."""
    try:
        typed = events_of(events)
        start = last_run(typed)
        if start is None:
            raise UsageError("the journal has no run_start: there is no run to resume")
        run = typed[start:]
        stop, stop_at = last_stop(run)
        why = resumable(stop)
        t_end = run[-1].t or 0.0
        state = ResumeState(run_start=events[start], why=why, t_end=t_end, price=price)
        fold_to_resume(run, state, stop_at, None if stop is None else why)
        return state
    except JournalError as exc:
        raise UsageError(f"the journal is damaged: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise UsageError(f"the journal is damaged: {type(exc).__name__}: {exc}") from None


def resume_run(
    settings: RunSettings,
    path: str | Path,
    *,
    limits: Limits | None = None,
    decisions: Mapping[str, Decision] | None = None,
    force: bool = False,
    fsync: bool = False,
) -> RunResult:
    recorded, state = prepare_resume(path, settings.price)
    settings = resumed_settings(settings, state, limits)
    check_agent(settings, state.run_start, recorded.path, force=force)
    given = fresh_decisions(decisions or {}, state.decisions)
    known = {**state.decisions, **given}  # a decision in the journal stands
    known = {**_leading_to(known), **known}
    journal = open_to_append(recorded.path, state, fsync=fsync)  # locked: then changed
    try:
        torn = set_aside_torn(recorded)
        settings = dataclasses.replace(
            settings, journal=journal, tree=numbered_after(settings.tree, recorded.events)
        )
        notes = uncertain_notes(state, recorded.created)
        limits_now = vars(settings.limits)
        record = resume_record(state, state.why, torn, len(recorded.torn), limits_now)
        loop = ResumedLoop(settings, state, record, decisions=known, notes=notes)
        for call_id, decision in given.items():
            loop.emit(ApprovalEvent(**decision_data(call_id, decision, who="Agent.resume")))
        return loop.execute()
    finally:
        journal.close()


def fresh_decisions(
    given: Mapping[str, Decision], recorded: Mapping[str, Decision]
) -> dict[str, Decision]:
    """The decisions given that the journal does not hold already: a decision in the journal
    stands, but an approval is answered by an answer to the question its call then asked."""
    return {
        call_id: decision
        for call_id, decision in given.items()
        if call_id not in recorded or (isinstance(decision, Mapping) and recorded[call_id] is True)
    }


def _leading_to(decisions: Mapping[str, Decision]) -> dict[str, Decision]:
    """The agent calls that lead to the sub-agents' calls decided (``call_0_0/call_1_0``):
    each runs again, to take the decision down to its child, without asking the approver
    again (``reactloop.subagent_resume``)."""
    return {key.split("/", 1)[0]: True for key in decisions if "/" in key}


def numbered_after(place: TreePlace | None, events: Sequence[Mapping[str, Any]]) -> TreePlace:
    """The resumed run's place in its tree, its children numbered after those its journal
    records (``child_start``), so that a child it starts now never takes an earlier one's
    path (``/coder#1``) in ``cost`` and ``view``."""
    start = children_started(events) + 1
    return dataclasses.replace(place or TreePlace(), children=itertools.count(start))


def open_to_append(path: Path, state: ResumeState, *, fsync: bool = False) -> Journal:
    """The journal, opened to go on (its lock taken); a live writer is a ``UsageError``."""
    try:
        return Journal(path, fsync=fsync, append=True, t_offset=state.t_end)
    except (JournalError, OSError) as exc:
        raise UsageError(f"cannot resume {path}: {exc}") from None


def resumed_settings(
    settings: RunSettings, state: ResumeState, limits: Limits | None
) -> RunSettings:
    """The agent's settings with the recorded instructions, and the recorded limits unless
    others are given (the counts so far count against them)."""
    chosen = limits if limits is not None else state.recorded_limits
    return dataclasses.replace(settings, instructions=state.instructions, limits=chosen)
