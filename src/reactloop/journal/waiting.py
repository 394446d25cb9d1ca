"""What waits for a person in a run's state (``fold.py`` dispatches here): their decisions on
pending calls (``approval`` events) and the questions calls asked that nobody could answer
then (``elicitation`` events with ``action: "awaiting"``).

A call whose question waits did start (its ``tool_start`` is written) but is put off as a
deferred call is: it is *not started* again, counted when it runs again, and the question is
kept (``RunState.questions``) for ``reactloop approve`` to show.
"""

from __future__ import annotations

from reactloop.journal.run_state import OpenCall, RunState
from reactloop.journal.schema import ApprovalEvent, ElicitationEvent


def set_call(state: RunState, call_id: str, value: str, started: float | None) -> None:
    for index, open_call in enumerate(state.calls):
        if open_call.call.id == call_id:
            t = started if started is not None else open_call.started_t
            state.calls[index] = OpenCall(call=open_call.call, state=value, started_t=t)


def on_approval(state: RunState, event: ApprovalEvent) -> None:
    """A decision on a pending call (not a policy): a denial stands, an approval after it
    does not undo it; an approval with an answer (to the call's question) keeps the answer."""
    call_id = event.call_id
    if call_id is None:
        return
    decided = state.decisions.get(call_id)
    if event.decision != "approve":
        state.decisions[call_id] = event.reason or "denied by the user"
    elif not isinstance(decided, str):
        state.decisions[call_id] = (
            dict(event.answer) if event.answer is not None else (decided or True)
        )


def on_elicitation(state: RunState, event: ElicitationEvent) -> None:
    call_id = event.call_id
    if call_id is None:
        return
    if event.action != "awaiting":
        state.questions.pop(call_id, None)
        return
    state.questions[call_id] = {
        "server": event.server,
        "message": event.message,
        "form": event.form,
    }
    if call_id in state.started:  # it counts when it runs again
        state.started.discard(call_id)
        state.counts.tool_calls -= 1
    set_call(state, call_id, "not_started", None)
