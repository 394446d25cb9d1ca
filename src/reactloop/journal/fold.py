"""``advance``: the one function that moves a ``RunState`` (``run_state.py``) on by an event,
dispatched on the event's class (``schema.py``), a warning's on its ``WarningKind``; ``fold``
folds many. Its counters (``RunState.counts``) move through the functions the live loop moves
its own with (``run_counts.py``), so that the fold of a run's events so far is the live run's
``RunCounts`` at that event (``tests/journal/test_run_state_fold.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import TRUNCATED_NOTICE
from reactloop.journal.guard_fold import forget, on_call, on_limits, on_result, on_turn
from reactloop.journal.legacy import not_run_of
from reactloop.journal.run_counts import (
    count_budget_notice,
    count_invalid_answer,
    count_request,
    count_turn,
    spend_model_call,
)
from reactloop.journal.run_state import OpenCall, RunState
from reactloop.journal.schema import (
    ApprovalEvent,
    BudgetNoticeEvent,
    CheckEvent,
    ChildStopEvent,
    ElicitationEvent,
    RequestEvent,
    ResumeEvent,
    RunStartEvent,
    SkillActivationEvent,
    StopEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolSearchEvent,
    ToolStartEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.journal.waiting import on_approval, on_elicitation, set_call
from reactloop.journal.warning_kinds import WarningKind
from reactloop.messages import Message, ModelTurn, NotRun, Usage

CHECKLIST = "checklist"  # a ``check`` event's kind: the checklist shown to the model


def fold(events: Iterable[JournalEvent], state: RunState | None = None) -> RunState:
    state = RunState() if state is None else state
    for event in events:
        advance(state, event)
    return state


def advance(state: RunState, event: JournalEvent) -> RunState:
    """``state`` moved on by ``event`` (in place: the fold owns it), and returned."""
    handler = _HANDLERS.get(type(event))
    if handler is not None:
        handler(state, event)
    counts = state.counts
    if event.step > counts.step:
        counts.step = event.step
    t = event.t
    if t is not None:
        if state.t0 is None:
            state.t0 = t
        state.seconds = max(0.0, t - state.t0)
    return state


def place_notice(state: RunState) -> None:
    """The notice a turn's warning announced, after the results of that turn's calls."""
    if state.notice is not None:
        state.messages.append(state.notice)
        state.notice = None


def _on_run_start(state: RunState, event: RunStartEvent) -> None:
    opening = [Message(role="user", content=str(event.task or ""), kind="task")]
    if isinstance(event.instructions, str) and event.instructions:
        opening.insert(0, Message(role="system", content=event.instructions))
    state.notices = opening
    on_limits(state.guard, event.limits)


def _on_request(state: RunState, event: RequestEvent) -> None:
    state.notice, state.notices = None, []  # they are in the request, where they were put
    new = [Message.from_dict(m) for m in event.messages_new]
    state.messages[event.n_messages - len(new) :] = new
    count_request(state.counts, event.n_messages, event.wind_down)


def _on_turn(state: RunState, event: TurnEvent) -> None:
    place_notice(state)
    on_turn(state.guard)
    turn = ModelTurn.from_dict(event.turn)
    if state.loop is not None:
        state.last_word = turn
    price = state.price
    spend_model_call(state.counts, turn.usage, 0.0 if price is None else price.cost(turn.usage))
    count_turn(state.counts, turn)
    state.messages.extend(state.notices)
    state.notices = []
    said = {"content": turn.text, "reasoning": turn.reasoning, "raw": turn.raw_message}
    state.messages.append(Message(role="assistant", tool_calls=turn.tool_calls, **said))
    state.calls = [OpenCall(call=call, state="not_started") for call in turn.tool_calls]
    state.last_turn, state.turn_handled = turn, False
    answered = not turn.tool_calls and turn.answer is not None and turn.finish_reason == "stop"
    state.final_turn = turn if answered else None


def _on_call(state: RunState, event: ToolCallEvent) -> None:
    state.turn_handled = True
    on_call(state.guard, event.call, event.effects)


def _on_child_stop(state: RunState, event: ChildStopEvent) -> None:
    """A sub-agent's spending (its descendants' included), counted in its parent as it was
    live (``loop/tree_budget.py``): a resumed root's limits hold for the whole tree."""
    usage = Usage.from_dict(event.usage or {})
    cost = event.cost or 0.0  # a child without a price records none
    state.count_child(event.call_id, event.model_calls, event.tool_calls, usage, cost)


def _on_start(state: RunState, event: ToolStartEvent) -> None:
    state.turn_handled = True
    if event.call_id not in state.started:  # a call run again on resume counts once
        state.started.add(event.call_id)
        state.counts.tool_calls += 1
    set_call(state, event.call_id, "uncertain", event.t or 0.0)


def _on_result(state: RunState, event: ToolResultEvent) -> None:
    state.turn_handled = True
    result = event.result
    call_id, name = str(result["call_id"]), result.get("name")
    executed = bool(result.get("executed", True))
    if executed:
        state.executed.add(call_id)
    not_run = state.not_run[call_id] = not_run_of(result, event.content)
    on_result(state.guard, call_id, executed, not_run, event.content)
    if not_run == "loop_detected":  # the guard's message was its warning's, just before
        state.loop = state.warned.get(call_id, "the loop guard stopped the run")
    state.messages.append(
        Message(role="tool", content=event.content, tool_call_id=call_id, name=name)
    )
    set_call(state, call_id, "done", None)


def _on_warning(state: RunState, event: WarningEvent) -> None:
    state.turn_handled = True
    if event.call_id is not None:
        state.warned[event.call_id] = event.message
    kind = _WARNINGS.get(event.kind)
    if kind is not None:
        kind(state, event)


def _on_model_error(state: RunState, event: WarningEvent) -> None:
    state.counts.model_calls += 1


def _on_wind_down(state: RunState, event: WarningEvent) -> None:
    place_notice(state)
    state.counts.wound_down = True
    state.notices.append(Message(role="user", content=event.message, kind="wind_down"))


def _on_truncated(state: RunState, event: WarningEvent) -> None:
    state.counts.truncations += 1  # its notice follows the refused calls' results
    state.notice = Message(role="user", content=TRUNCATED_NOTICE, kind="truncated")


def _on_invalid_output(state: RunState, event: WarningEvent) -> None:
    if event.count:
        state.counts.invalid_answers = event.count
    else:
        count_invalid_answer(state.counts)
    if event.notice is not None:  # the correction after an answer in the text, not a call
        state.notice = Message(role="user", content=event.notice, kind="format_error")


def _on_format_error(state: RunState, event: WarningEvent) -> None:
    state.counts.format_errors += 1
    state.notice = Message(role="user", content=event.message, kind="format_error")


def _on_check(state: RunState, event: CheckEvent) -> None:
    state.turn_handled = True
    if event.kind == CHECKLIST:
        state.counts.checklist_shown = True
    if event.notice is not None:  # told after the answer's results, as the live loop does
        state.messages.append(Message(role="user", content=event.notice, kind="notice"))


def _on_search(state: RunState, event: ToolSearchEvent) -> None:
    state.revealed.update(str(name) for name in event.revealed)


def _on_skill(state: RunState, event: SkillActivationEvent) -> None:
    state.activated.add(event.name)


def _on_budget_notice(state: RunState, event: BudgetNoticeEvent) -> None:
    place_notice(state)
    count_budget_notice(state.counts)
    state.notices.append(Message(role="user", content=event.line, kind="notice"))


def _on_stop(state: RunState, event: StopEvent) -> None:
    place_notice(state)
    state.superseded = event.stop_reason


def _on_resume(state: RunState, event: ResumeEvent) -> None:
    state.notices = []  # the resumed loop made its own
    state.counts.seconds_before = state.seconds  # its clock goes on (the journal's ``t`` too)
    if state.superseded is not None:
        reopen(state, state.superseded)
        state.superseded = None
    on_limits(state.guard, event.limits)
    forget_open_checks(state)


def forget_open_checks(state: RunState) -> None:
    """The last turn's calls without a result, judged again by the resumed loop as it
    settles them: the loop guard's checks of them are taken back (``guard_fold.forget``)."""
    forget(state.guard, [c.call.id for c in state.calls if c.state != "done"])


def reopen(state: RunState, reason: str) -> None:
    """A run that stopped answered its open calls ``not executed: <reason>``: with the stop
    superseded by a resume, those calls are open again (their results are taken back out).

    A cancel (Ctrl-C) also left unrun the call it stopped before it ran or at its approval:
    those are open again too, and not counted (they count when they run). A call closed
    ``not executed`` after its ``tool_start`` may have run (the Ctrl-C came between the tool's
    return and its result): it is *uncertain*. A call interrupted while it ran keeps its
    result (``cancelled: the run was interrupted while it ran``)."""
    unrun: tuple[NotRun, ...] = ("stopped", "cancelled") if reason == "cancelled" else ("stopped",)
    reopened: dict[str, str] = {}
    for open_call in state.calls:
        call_id = open_call.call.id
        not_run = state.not_run.get(call_id) if open_call.state == "done" else None
        if not_run not in unrun:
            continue
        if not_run == "stopped" and call_id in state.started:
            reopened[call_id] = "uncertain"
            continue
        reopened[call_id] = "not_started"
        if call_id in state.started:  # it had its tool_start, and did not run
            state.started.discard(call_id)
            state.counts.tool_calls -= 1
    if reopened:
        state.messages = [
            m for m in state.messages if not (m.role == "tool" and m.tool_call_id in reopened)
        ]
        state.calls = [
            OpenCall(call=c.call, state=reopened.get(c.call.id, c.state), started_t=c.started_t)
            for c in state.calls
        ]


_Handler = Callable[[RunState, Any], None]
_HANDLERS: dict[type[JournalEvent], _Handler] = {
    RunStartEvent: _on_run_start,
    RequestEvent: _on_request,
    TurnEvent: _on_turn,
    ToolCallEvent: _on_call,
    ToolStartEvent: _on_start,
    ToolResultEvent: _on_result,
    WarningEvent: _on_warning,
    CheckEvent: _on_check,
    ToolSearchEvent: _on_search,
    SkillActivationEvent: _on_skill,
    BudgetNoticeEvent: _on_budget_notice,
    StopEvent: _on_stop,
    ResumeEvent: _on_resume,
    ApprovalEvent: on_approval,
    ElicitationEvent: on_elicitation,
    ChildStopEvent: _on_child_stop,
}
_WARNINGS: dict[WarningKind | str, _Handler] = {
    WarningKind.MODEL_ERROR: _on_model_error,
    WarningKind.WIND_DOWN: _on_wind_down,
    WarningKind.TRUNCATED: _on_truncated,
    WarningKind.INVALID_OUTPUT: _on_invalid_output,
    WarningKind.FORMAT_ERROR: _on_format_error,
    WarningKind.EMPTY_REPLY: _on_format_error,
}
