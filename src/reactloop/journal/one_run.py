"""``as_one_run``: a resumed run's events read as the one run they make, for the readers that
compare or count (``replay``): the stops a later ``resume`` superseded, the ``resume``
events and the results a resume replaced (a call closed by a stop, then run) left out, and
the limits the last resume ran under. ``view`` and ``cost`` read the events as they are:
one run (one ``run_start``) whose last ``stop`` is the run's, its resumes marked.
``children_started``: how far a resumed run's sub-agents are numbered already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import event_from_dict
from reactloop.journal.schema import ChildStartEvent, ResumeEvent, StopEvent, ToolResultEvent


def as_one_run(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    typed = [typed_or_none(event) for event in events]
    resumes = [i for i, event in enumerate(typed) if isinstance(event, ResumeEvent)]
    if not resumes:
        return list(events)
    last_result = {_call_id(e): i for i, e in enumerate(typed) if isinstance(e, ToolResultEvent)}
    kept: list[Mapping[str, Any]] = []
    for index, (event, record) in enumerate(zip(typed, events, strict=True)):
        if isinstance(event, ResumeEvent) or (isinstance(event, StopEvent) and index < resumes[-1]):
            continue
        if isinstance(event, ToolResultEvent) and last_result[_call_id(event)] != index:
            continue  # superseded by the result a resume gave it
        kept.append(record)
    return kept


def last_limits(events: Sequence[Mapping[str, Any]], recorded: Any) -> Any:
    """The limits of the last resume (raised on resume), else ``recorded``."""
    for event in map(typed_or_none, reversed(events)):
        if isinstance(event, ResumeEvent) and event.limits is not None:
            return event.limits
    return recorded


def children_started(events: Sequence[Mapping[str, Any]]) -> int:
    """The highest number of the sub-agents the journal's ``child_start``s name (``/coder#3``:
    3), 0 without one."""
    paths = [e.agent_path for e in map(typed_or_none, events) if isinstance(e, ChildStartEvent)]
    numbers = [int(n) for n in (path.rsplit("#", 1)[-1] for path in paths) if n.isdigit()]
    return max(numbers, default=0)


def typed_or_none(record: Mapping[str, Any]) -> JournalEvent | None:
    """The event of a record; None for one no reader could read (kept, as it is)."""
    try:
        return event_from_dict(record)
    except ValueError:
        return None


def _call_id(event: ToolResultEvent) -> str:
    return str(event.result.get("call_id"))
