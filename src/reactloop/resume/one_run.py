"""``as_one_run``: a resumed run's events read as the one run they make, for the readers that
compare or count (``replay``): the stops a later ``resume`` superseded, the ``resume``
events and the results a resume replaced (a call closed by a stop, then run) left out, and
the limits the last resume ran under. ``view`` and ``cost`` read the events as they are:
one run (one ``run_start``) whose last ``stop`` is the run's, its resumes marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def as_one_run(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    resumes = [i for i, event in enumerate(events) if event.get("type") == "resume"]
    if not resumes:
        return list(events)
    last_result: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.get("type") == "tool_result":
            result = event.get("result")
            if isinstance(result, Mapping):
                last_result[str(result.get("call_id"))] = index
    kept: list[Mapping[str, Any]] = []
    for index, event in enumerate(events):
        kind = event.get("type")
        if kind == "resume" or (kind == "stop" and index < resumes[-1]):
            continue
        if kind == "tool_result":
            result = event.get("result")
            call_id = str(result.get("call_id")) if isinstance(result, Mapping) else ""
            if last_result.get(call_id, index) != index:
                continue  # superseded by the result a resume gave it
        kept.append(event)
    return kept


def last_limits(events: Sequence[Mapping[str, Any]], recorded: Any) -> Any:
    """The limits of the last resume (raised on resume), else ``recorded``."""
    for event in reversed(events):
        if event.get("type") == "resume" and isinstance(event.get("limits"), Mapping):
            return event["limits"]
    return recorded
