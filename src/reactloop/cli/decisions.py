"""``record_decisions``: a person's decisions on the calls a run left pending, appended to its
journal as ``approval`` events (who, when, as given); ``reactloop resume`` then runs the
approved calls and answers the denied ones with the reason.

Only a run that stopped ``awaiting_approval`` has pending calls; an id that is not one of
them, or a call already denied, is a ``UsageError`` and nothing is written. A tree's calls
that wait in its sub-agents are those its root's last ``stop`` names (``pending``), each by
its chained id (``call_0_0/call_0_0``, ``PendingCall.id``): the decision is written in the
root's journal under that id, and ``Agent.resume`` takes it down the tree. So is an answer
to a question such a call asked (``--answer``): the question is read from the journal of the
agent it waits in, found through each ``child_start`` on the way down (``asked_below``).

``record_policy`` appends the approval policy given for the rest of the run (``reactloop
resume --allow``) as an ``approval`` event without a ``call_id``: ``{"policy": {"mode",
"allow"}, "who", "at"}``. It is a record, never a permission: a later resume applies only the
policy its own command line gives (``recorded_policy`` says what the journal holds).

Both are ``ApprovalEvent``s (``journal/schema.py``), written as the run's own events are: by
the typed ``Emitter`` to the journal's writer (``Journal``, which opens the file without
following a link and takes its lock: a journal a live process holds is refused), at the
run's last step, after a torn last line is set aside.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from reactloop.approval import Decision, decision_data
from reactloop.errors import UsageError
from reactloop.journal.emitter import Emitter
from reactloop.journal.one_run import typed_or_none
from reactloop.journal.recorded import Recorded, set_aside_torn
from reactloop.journal.resume_point import ResumeState
from reactloop.journal.schema import ApprovalEvent, ChildStartEvent, StopEvent
from reactloop.resume.resume_run import open_to_append, prepare_resume


def waiting_calls(
    events: Sequence[Mapping[str, Any]], state: ResumeState
) -> dict[str, dict[str, str]]:
    """The calls the run waits for, by id, each as it will run (``name``, ``arguments``)
    and the agent it waits in (``agent_path``, ``""`` for the root's own): the root's calls
    not started, then its sub-agents' calls that its last ``stop`` names. A root's call to a
    sub-agent that waits on a call below it is not itself waiting."""
    below = _waiting_below(events)
    leading = {call_id.split("/", 1)[0] for call_id in below}
    own = {
        c.call.id: {"name": c.call.name, "arguments": c.call.arguments, "agent_path": ""}
        for c in state.calls
        if c.state == "not_started" and c.call.id not in leading
    }
    return {**own, **below}


def _waiting_below(events: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The sub-agents' calls the last ``stop`` names, by chained id."""
    stop = next((e for e in map(typed_or_none, reversed(events)) if isinstance(e, StopEvent)), None)
    pending = stop.pending if stop is not None and stop.pending else []
    return {
        str(p["call_id"]): {
            "name": str(p.get("name")),
            "arguments": json.dumps(p.get("arguments"), ensure_ascii=False),
            "agent_path": str(p.get("agent_path") or ""),
        }
        for p in pending
        if isinstance(p, Mapping) and "/" in str(p.get("call_id", ""))
    }


def parse_answer(text: str) -> dict[str, Any]:
    """``--answer``: a JSON object (the form's values: accept) or ``decline`` / ``cancel``."""
    if text.strip() in ("decline", "cancel"):
        return {"action": text.strip()}
    try:
        content = json.loads(text)
    except ValueError:
        content = None
    if not isinstance(content, dict):
        raise UsageError(
            f"--answer {text!r}: give a JSON object of the form's values, or decline or cancel"
        )
    return {"action": "accept", "content": content}


def record_decisions(
    path: str | Path,
    call_ids: Sequence[str],
    *,
    deny: str | None,
    who: str,
    answer: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Approve (``deny`` None) or deny (with that reason) ``call_ids`` (none given: every
    pending call, or with ``answer`` every call whose question waits); the ``approval``
    events written, each with the question its call waits on (``question``)."""
    recorded, state = prepare_resume(path)
    if state.why != "awaiting_approval":
        raise UsageError(f"{recorded.path}: the run is not awaiting approval ({state.why})")
    calls = waiting_calls(recorded.events, state)
    questions = {**state.questions, **asked_below(recorded.path, recorded.events, calls)}
    chosen = _chosen(
        recorded.path, state, calls, call_ids, questions=questions, answered=answer is not None
    )
    decision: Decision = True if deny is None else (deny or "denied by the user")
    if answer is not None and deny is None:
        decision = dict(answer)
    events = [
        ApprovalEvent(
            **decision_data(i, decision, who=who),
            name=calls[i]["name"],
            arguments=calls[i]["arguments"],
        )
        for i in chosen
    ]
    _append(recorded, state, events)
    return [
        {
            **event.data(),
            "question": questions.get(str(event.call_id)),
            "agent_path": calls[str(event.call_id)]["agent_path"],
        }
        for event in events
    ]


def _append(recorded: Recorded, state: ResumeState, events: Sequence[ApprovalEvent]) -> None:
    """Write ``events`` at the end of the journal, at its run's last step; the first one the
    journal cannot take is a ``UsageError`` (the ones before it are written)."""
    with open_to_append(recorded.path, state) as journal:
        set_aside_torn(recorded)
        emitter = Emitter(journal, ())
        emitter.step = state.step
        for event in events:
            emitter.emit(event)
            if emitter.journal_error is not None:
                raise UsageError(f"{recorded.path}: {emitter.journal_error}")


def shown(event: Mapping[str, Any]) -> str:
    """A decided call as the person saw it: its id, tool and arguments, and for a sub-agent's
    call (its chained id) the agent it waits in."""
    where = f" in {event['agent_path']}" if event.get("agent_path") else ""
    return f"{event['call_id']} {event['name']} {event['arguments']}{where}"


def asked_below(
    path: Path, events: Sequence[Mapping[str, Any]], calls: Mapping[str, Any]
) -> dict[str, Mapping[str, Any]]:
    """The questions the sub-agents' waiting calls (by chained id) wait on."""
    asked = {i: _asked_in_child(path, events, i) for i in calls if "/" in i}
    return {i: question for i, question in asked.items() if question is not None}


def _asked_in_child(
    path: Path, events: Sequence[Mapping[str, Any]], chained: str
) -> Mapping[str, Any] | None:
    """The question a sub-agent's call waits on (``call_0_0/c1``: the call ``c1`` of the
    child that this journal's call ``call_0_0`` ran), read from the journal of the agent it
    waits in: the child's journal, named by its ``child_start``, and so on down the tree."""
    head, _, rest = chained.partition("/")
    starts = [e for e in map(typed_or_none, events) if isinstance(e, ChildStartEvent)]
    traces = [e.trace for e in starts if e.call_id == head and e.trace]
    if not traces:
        return None
    trace = Path(traces[-1])
    if not trace.exists():  # written relative to another folder: it lies beside its parent's
        trace = path.with_name(trace.name)
    try:
        recorded, state = prepare_resume(trace)
    except UsageError:
        return None
    if "/" in rest:
        return _asked_in_child(recorded.path, recorded.events, rest)
    return state.questions.get(rest)


def _chosen(
    path: Path,
    state: ResumeState,
    calls: Mapping[str, Any],
    call_ids: Sequence[str],
    *,
    questions: Mapping[str, Any],
    answered: bool,
) -> list[str]:
    """The calls decided on: those given, checked pending (and, for an answer, asking: its
    question in ``questions``, the run's own calls' and its sub-agents')."""
    pending = list(calls)
    asking = [i for i in pending if i in questions]
    waiting = (
        asking if answered else [i for i in pending if i not in state.decisions or i in asking]
    )
    chosen = list(call_ids) or waiting
    if answered and not chosen:
        raise UsageError(f"{path}: no pending call asked a question; --answer is for one that did")
    unknown = [i for i in chosen if i not in pending]
    if unknown:
        raise UsageError(
            f"{path}: no pending call {', '.join(unknown)} (pending: {', '.join(pending)})"
        )
    denied = [i for i in chosen if isinstance(state.decisions.get(i), str)]
    if denied:
        raise UsageError(f"{path}: {', '.join(denied)} already denied; a denial stands")
    unasked = [i for i in chosen if answered and i not in questions]
    if unasked:
        raise UsageError(
            f"{path}: {', '.join(unasked)} asked no question; --answer is for one that did"
        )
    return chosen


def record_policy(path: str | Path, policy: Mapping[str, Any], *, who: str) -> dict[str, Any]:
    """Append the approval policy for the rest of the run; the ``approval`` event's data."""
    recorded, state = prepare_resume(path)
    at = datetime.now().astimezone().isoformat(timespec="seconds")
    event = ApprovalEvent(policy=dict(policy), who=who, at=at, written=_POLICY)
    _append(recorded, state, [event])
    return event.data()


_POLICY = frozenset({"policy", "who", "at"})
"""A policy's line: these fields alone (no decision, no ``reason``)."""


def recorded_policy(events: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The last approval policy the journal records (``record_policy``), or None."""
    for event in map(typed_or_none, reversed(events)):
        if isinstance(event, ApprovalEvent) and event.policy is not None:
            return dict(event.policy)
    return None
