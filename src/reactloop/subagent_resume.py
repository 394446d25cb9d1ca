"""A sub-agent's run that a parent finds again: after a kill, or awaiting a decision.

A resumed parent calls an agent tool again with the same call id (it is ``idempotent``); the
call finds the child it ran by that id (the parent's journal's ``child_start`` names the
child's journal). A child that had stopped gives its recorded outcome and runs nothing; one
killed with its parent, or stopped ``awaiting_approval``, goes on in its own journal, resumed
as a child, with the decisions on its calls that were given to its parent: those keyed
``<call id>/...``, the call id of its parent's call taken off (``PendingCall.id``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from reactloop.approval import Decision
from reactloop.errors import JournalError, ToolError, UsageError
from reactloop.journal.reader import read_events
from reactloop.journal.schema import (
    ChildStartEvent,
    ChildStopEvent,
    ResumeEvent,
    RunStartEvent,
    StopEvent,
)
from reactloop.journal.writer import Journal
from reactloop.limits import StopReason
from reactloop.loop.settings import RunSettings
from reactloop.loop.tree_budget import RunView
from reactloop.messages import Usage
from reactloop.result import PendingCall, RunResult
from reactloop.resume.resume_run import resume_run
from reactloop.resume.resumed_loop import ResumedLoop


@dataclasses.dataclass(frozen=True)
class Left:
    """A child's journal that a run of its parent left: ``ended`` is its outcome when it
    stopped for good (None: it was killed too, or waits for a decision, and is resumed)."""

    path: Path
    ended: RunResult | None
    agent_path: str  # the child's place in the tree, as it had it
    counted: int | None  # its last ``child_stop`` in its parent's journal: its tool calls


def left_child(parent: RunView, call_id: str | None) -> Left | None:
    """The child a resumed parent's call ran before: the ``child_start`` of the same call id
    in the parent's journal, and the child's own journal, which began its run."""
    own = parent.settings.journal
    if call_id is None or not isinstance(parent, ResumedLoop) or not isinstance(own, Journal):
        return None
    try:
        parents = [e for e in read_events(own.path) if getattr(e, "call_id", None) == call_id]
        starts = [e for e in parents if isinstance(e, ChildStartEvent) and e.trace]
        events = read_events(starts[-1].trace or "") if starts else []
    except (JournalError, OSError):
        return None
    if not any(isinstance(e, RunStartEvent) for e in events):
        return None  # killed before the child's first line: it never ran
    resumes = [i for i, e in enumerate(events) if isinstance(e, ResumeEvent)]
    stop = next((e for e in events[max(resumes, default=0) :] if isinstance(e, StopEvent)), None)
    ended = None
    if stop is not None and stop.stop_reason != StopReason.AWAITING_APPROVAL:
        ended = outcome(stop)
    stops = [e for e in parents if isinstance(e, ChildStopEvent)]
    counted = stops[-1].tool_calls if stops else None
    return Left(Path(starts[-1].trace or ""), ended, starts[-1].agent_path, counted)


def outcome(stop: StopEvent) -> RunResult:
    """A child's recorded ``stop`` as the result its parent's tool reads."""
    try:
        reason = StopReason(stop.stop_reason)
    except ValueError:
        reason = StopReason.MODEL_ERROR
    return RunResult(
        answer=stop.answer,
        stop_reason=reason,
        model_calls=stop.model_calls,
        tool_calls=stop.tool_calls,
        usage=Usage.from_dict(stop.usage),
        history=(),
        seconds=stop.seconds or 0.0,
        error=stop.error,
        forced=stop.forced,
        cost=stop.cost,
    )


def resumed(
    name: str, settings: RunSettings, path: Path, decisions: Mapping[str, Decision]
) -> RunResult:
    """The child left by its parent, resumed in its own journal as a child again: its calls
    that had run are not run again (``reactloop.resume``); ``decisions`` (``decisions_below``)
    settle the ones that waited."""
    try:
        return resume_run(settings, path, limits=settings.limits, decisions=decisions)
    except UsageError as exc:
        raise ToolError(f"{name} was killed with its parent and cannot go on: {exc}") from None


def decisions_below(parent: RunView, call_id: str | None) -> dict[str, Decision]:
    """The decisions given to a resumed ``parent`` on the calls of the child of its call
    ``call_id``, keyed as the child knows them."""
    given: Mapping[str, Decision] = parent.decisions if isinstance(parent, ResumedLoop) else {}
    prefix = f"{call_id}/"
    return {k.removeprefix(prefix): v for k, v in given.items() if k.startswith(prefix)}


def waiting(call_id: str, path: str, result: RunResult) -> tuple[PendingCall, ...]:
    """A child's calls that wait for a decision, as its parent's run lists them: each id
    behind the parent's call id, each with the path of the agent whose call it is."""
    return tuple(
        dataclasses.replace(p, id=f"{call_id}/{p.id}", agent_path=p.agent_path or path)
        for p in result.pending
    )
