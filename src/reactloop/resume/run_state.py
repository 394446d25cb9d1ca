"""A run rebuilt from its journal: the history exactly as the model saw it, the counts so far,
and the calls of the last turn, each known done, uncertain or not started.

The history is the ``request`` events' ``messages_new`` laid at their place (a request's new
messages start at ``n_messages - len(messages_new)``, so a compaction that rewrote the
history is rebuilt too), then the last turn and the results after it. The events after the
last completed point (the last turn, its calls and their results) are the preparation of a
step that never got its turn (a budget notice, a wind-down, a request): the resumed loop
makes them again, the same way, so they are left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.errors import UsageError
from reactloop.journal.legacy import not_run_of
from reactloop.loop.notices import truncated_notice
from reactloop.messages import Message, ModelTurn, NotRun, ToolCall, Usage

RESUMABLE = (
    "awaiting_approval",
    "timeout",
    "max_model_calls",
    "max_tool_calls",
    "max_tokens",
    "cancelled",
)
_DONE_POINTS = {"turn", "tool_call", "tool_start", "tool_result", "approval"}
_NOTICE_WARNINGS = {"format_error", "empty_reply", "truncated"}


@dataclass(frozen=True, kw_only=True)
class OpenCall:
    """A call of the last turn: ``state`` is ``done`` (its result is recorded),
    ``uncertain`` (it started, no result: it may have run) or ``not_started``."""

    call: ToolCall
    state: str
    started_t: float | None = None


@dataclass(kw_only=True)
class ResumeState:
    run_start: Mapping[str, Any]
    why: str  # "no_stop" (the process died), or the stop reason it continues from
    messages: list[Message] = field(default_factory=list)
    sent: int = 0  # messages the model has seen (the last request's ``n_messages``)
    step: int = 0
    turns: int = 0  # model turns the model produced (where a stateful model resumes)
    model_calls: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    last_usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0  # the run's time so far, in journal seconds
    t_end: float = 0.0  # the journal's last ``t``
    calls: list[OpenCall] = field(default_factory=list)
    final_turn: ModelTurn | None = None  # a last turn that answered, without a stop
    last_turn: ModelTurn | None = None
    turn_handled: bool = True  # False: the last turn is journaled, nothing the loop did after
    wound_down: bool = False
    format_errors: int = 0  # unusable replies in a row
    invalid_answers: int = 0  # a typed run's invalid answers in a row (its warnings' count)
    invalid_before_turn: int = 0  # the same before the last turn, for a turn judged again
    truncations: int = 0
    notices_at: list[tuple[int, int, int]] = field(default_factory=list)
    decisions: dict[str, bool | str] = field(default_factory=dict)  # call id: True or reason
    started: set[str] = field(default_factory=set)  # ids of the calls with a tool_start
    executed: set[str] = field(default_factory=set)  # ids of the calls a tool ran (a result)
    not_run: dict[str, NotRun | None] = field(default_factory=dict)  # by call id: its result's
    warned: dict[str, str] = field(default_factory=dict)  # by call id: its last warning's message
    notice: Message | None = None  # a format or truncation notice still to be placed
    superseded: str | None = None  # the reason of a stop a later ``resume`` supersedes
    loop: str | None = None  # the loop guard stopped the run: why (its last word follows)
    last_word: ModelTurn | None = None  # the model's answer after that, the stop lost
    checklist_shown: bool = False  # the checklist was shown to the model (a ``check`` event)
    revealed: set[str] = field(default_factory=set)  # deferred tools a search revealed
    activated: set[str] = field(default_factory=set)  # skills the model activated

    @property
    def task(self) -> str:
        return str(self.run_start.get("task") or "")


def last_run(events: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    starts = [i for i, event in enumerate(events) if event.get("type") == "run_start"]
    if not starts:
        raise UsageError("the journal has no run_start: there is no run to resume")
    return events[starts[-1] :]


def rebuild(events: Sequence[Mapping[str, Any]]) -> ResumeState:
    """The state of the journal's last run; a ``UsageError`` when it cannot go on, also for
    an event of a shape the loop never writes (a journal damaged by hand or by a disk)."""
    try:
        return _rebuild(events)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise UsageError(f"the journal is damaged: {type(exc).__name__}: {exc}") from None


def _rebuild(events: Sequence[Mapping[str, Any]]) -> ResumeState:
    run = last_run(events)
    why, stop_at = _why(run)
    done = _last_done_point(run, stop_at)
    state = ResumeState(run_start=run[0], why=why)
    t0 = _number(run[0].get("t"))
    for event in run[1 : done + 1]:
        try:
            _apply(state, event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            kind = str(event.get("type"))[:40]
            raise UsageError(f"the journal's {kind} event is damaged: {exc}") from None
    _flush_notice(state)
    if state.turn_handled:  # its calls' results are in; the warning of its answer came after
        for event in run[done + 1 : stop_at]:
            if event.get("type") == "warning" and event.get("kind") == "invalid_output":
                _on_warning(state, event)
    if not state.messages:
        state.messages = _opening(run)
    state.decisions = decisions_in(run)
    if why != "no_stop":
        _reopen(state, why)
    # an uncertain call counts again when it runs again (or once it is answered without)
    state.tool_calls -= sum(c.state == "uncertain" for c in state.calls)
    state.t_end = _number(run[-1].get("t"))
    state.seconds = max(0.0, _number(run[done].get("t")) - t0)
    return state


def _opening(run: Sequence[Mapping[str, Any]]) -> list[Message]:
    """A run killed before its first turn: the messages up to its task, as first sent (none
    without a request: the resumed loop adds the task itself)."""
    for event in run:
        if event.get("type") == "request":
            messages = [Message.from_dict(m) for m in event["messages_new"]]
            tasks = [i for i, m in enumerate(messages) if m.kind == "task"]
            return messages[: tasks[-1] + 1] if tasks else []
    return []


def _why(run: Sequence[Mapping[str, Any]]) -> tuple[str, int]:
    """Why the run is resumed, and where its last ``stop`` is (len(run) without one)."""
    last_stop = max((i for i, e in enumerate(run) if e.get("type") == "stop"), default=None)
    resumed_after = any(e.get("type") == "resume" for e in run[(last_stop or 0) + 1 :])
    if last_stop is None or resumed_after:
        return "no_stop", len(run)
    reason = str(run[last_stop].get("stop_reason"))
    if reason == "final_answer":
        raise UsageError("the run is finished (final_answer): there is nothing to resume")
    if reason not in RESUMABLE:
        raise UsageError(f"a run that stopped {reason} cannot be resumed ({', '.join(RESUMABLE)})")
    return reason, last_stop


def _last_done_point(run: Sequence[Mapping[str, Any]], stop_at: int) -> int:
    done = 0
    for index, event in enumerate(run[:stop_at]):
        kind = event.get("type")
        if kind in _DONE_POINTS or (kind == "warning" and event.get("kind") in _NOTICE_WARNINGS):
            done = index
    return done


def _apply(state: ResumeState, event: Mapping[str, Any]) -> None:
    kind = event.get("type")
    if kind == "request":
        state.notice = None  # it is in the request, where it was put
        new = [Message.from_dict(m) for m in event["messages_new"]]
        start = int(event["n_messages"]) - len(new)
        state.messages[start:] = new
        state.sent = int(event["n_messages"])
    elif kind == "turn":
        _flush_notice(state)
        _on_turn(state, event)
    elif kind in ("tool_call", "warning", "tool_result", "tool_start", "check"):
        state.turn_handled = True
    if kind == "tool_start":
        if event["call_id"] not in state.started:  # a call run again on resume counts once
            state.started.add(event["call_id"])
            state.tool_calls += 1
        _set_call(state, str(event["call_id"]), "uncertain", _number(event.get("t")))
    elif kind == "tool_result":
        _on_result(state, event)
    elif kind == "warning":
        _on_warning(state, event)
    elif kind == "check" and event.get("kind") == "checklist":
        state.checklist_shown = True
    elif kind == "tool_search":
        state.revealed.update(str(name) for name in event["revealed"])
    elif kind == "skill_activation":
        state.activated.add(str(event["name"]))
    elif kind == "budget_notice":
        state.notices_at.append((state.model_calls, state.tool_calls, state.usage.total_tokens))
    elif kind == "stop":
        state.superseded = str(event.get("stop_reason"))
    elif kind == "resume" and state.superseded is not None:
        _reopen(state, state.superseded)
        state.superseded = None
    elif kind == "approval" and "call_id" in event:  # not a policy (``decisions.py``)
        decision = event.get("decision")
        state.decisions[str(event["call_id"])] = (
            True if decision == "approve" else str(event.get("reason") or "denied by the user")
        )
    if isinstance(event.get("step"), int):
        state.step = max(state.step, event["step"])


def decisions_in(run: Sequence[Mapping[str, Any]]) -> dict[str, bool | str]:
    """The decisions recorded on pending calls (``approval`` events): True, or the reason of
    a denial. A denial stands: a later approval of the same call does not undo it."""
    decisions: dict[str, bool | str] = {}
    for event in run:
        if event.get("type") != "approval" or "call_id" not in event:
            continue
        call_id = str(event.get("call_id"))
        if event.get("decision") == "approve":
            decisions.setdefault(call_id, True)
        else:
            decisions[call_id] = str(event.get("reason") or "denied by the user")
    return decisions


def _flush_notice(state: ResumeState) -> None:
    """The notice a turn's warning announced, after the results of that turn's calls."""
    if state.notice is not None:
        state.messages.append(state.notice)
        state.notice = None


def _on_turn(state: ResumeState, event: Mapping[str, Any]) -> None:
    turn = ModelTurn.from_dict(event["turn"])
    if state.loop is not None:
        state.last_word = turn
    state.turns += 1
    state.model_calls += 1
    state.usage = state.usage + turn.usage
    state.last_usage = turn.usage
    state.messages.append(
        Message(
            role="assistant",
            content=turn.text,
            tool_calls=turn.tool_calls,
            reasoning=turn.reasoning,
            raw=turn.raw_message,
        )
    )
    state.calls = [OpenCall(call=call, state="not_started") for call in turn.tool_calls]
    state.invalid_before_turn, state.invalid_answers = state.invalid_answers, 0
    if turn.format_error is None and (turn.tool_calls or turn.answer is not None):
        state.format_errors = 0
    state.last_turn, state.turn_handled = turn, False
    answered = not turn.tool_calls and turn.answer is not None and turn.finish_reason == "stop"
    state.final_turn = turn if answered else None


def _on_result(state: ResumeState, event: Mapping[str, Any]) -> None:
    result = event["result"]
    call_id, name = str(result["call_id"]), result.get("name")
    content = str(event["content"])
    if result.get("executed", True):
        state.executed.add(call_id)
    not_run = state.not_run[call_id] = not_run_of(result, content)
    if not_run == "loop_detected":  # the guard's message was its warning's, just before
        state.loop = state.warned.get(call_id, "the loop guard stopped the run")
    state.messages.append(Message(role="tool", content=content, tool_call_id=call_id, name=name))
    _set_call(state, call_id, "done", None)


def _on_warning(state: ResumeState, event: Mapping[str, Any]) -> None:
    kind = event.get("kind")
    if isinstance(event.get("call_id"), str):
        state.warned[event["call_id"]] = str(event.get("message"))
    if kind == "model_error":
        state.model_calls += 1
    elif kind == "wind_down":
        state.wound_down = True
    elif kind == "truncated":  # its notice follows the refused calls' results
        state.truncations += 1
        state.notice = Message(role="user", content=truncated_notice(), kind="truncated")
    elif kind == "invalid_output":
        state.invalid_answers = int(event.get("count") or state.invalid_before_turn + 1)
    elif kind in _NOTICE_WARNINGS:
        state.format_errors += 1
        state.notice = Message(role="user", content=str(event["message"]), kind="format_error")


def _set_call(state: ResumeState, call_id: str, value: str, started: float | None) -> None:
    for index, open_call in enumerate(state.calls):
        if open_call.call.id == call_id:
            t = started if started is not None else open_call.started_t
            state.calls[index] = OpenCall(call=open_call.call, state=value, started_t=t)


def _reopen(state: ResumeState, reason: str) -> None:
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
        else:
            reopened[call_id] = "not_started"
            if call_id in state.started:  # it had its tool_start, and did not run
                state.started.discard(call_id)
                state.tool_calls -= 1
    if not reopened:
        return
    state.messages = [
        m for m in state.messages if not (m.role == "tool" and m.tool_call_id in reopened)
    ]
    state.calls = [
        OpenCall(call=c.call, state=reopened[c.call.id], started_t=c.started_t)
        if c.call.id in reopened
        else c
        for c in state.calls
    ]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
