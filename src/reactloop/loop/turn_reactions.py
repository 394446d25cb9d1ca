"""What the loop does with a model's turn once it is in the history: stop (a final answer
through the run's checks, a refusal, a cut reply past its retries), run its calls, or tell the
model what was wrong with it; and the model's last word before the loop guard's stop.

Functions of the ``RunLoop`` (``run_loop.py``), which calls ``react`` once a step; a resumed
run (``resume/resumed_loop.py``) calls them to settle the turn it was killed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import StopReason
from reactloop.loop.model_call import ModelFailure
from reactloop.loop.notices import (
    empty_reply_notice,
    format_error_notice,
    loop_notice,
    truncated_notice,
)
from reactloop.loop.run_parts import refused
from reactloop.loop.runtime.custody import TOOLS_OUTLASTED
from reactloop.messages import Message, ModelTurn, ToolCall
from reactloop.result import Stop

if TYPE_CHECKING:
    from reactloop.loop.run_loop import RunLoop


def react(run: RunLoop, turn: ModelTurn) -> Stop | None:
    """What the loop does with a turn in its history: stop, or run its calls, or tell
    the model what was wrong with it."""
    if turn.finish_reason == "content_filter":
        return Stop(StopReason.CONTENT_FILTER, None, refused(turn))
    if turn.finish_reason == "length":
        return on_truncated(run, turn)
    if run.answers is not None:
        judged = run.answers.judge(turn)
        if judged is not None and judged.others:  # final_answer beside other calls
            return on_tool_calls(run, judged.others)
        if judged is not None:
            stop = run.answers.settle(judged, run.counts.forced)
            valid = stop is not None and stop.reason is StopReason.FINAL_ANSWER
            return run.accept(stop) if stop is not None and valid else stop
    if turn.format_error is not None or (not turn.tool_calls and turn.answer is None):
        return on_format_error(run, turn)
    if not turn.tool_calls:
        return run.accept(
            Stop(StopReason.FINAL_ANSWER, turn.answer, None, forced=run.counts.forced)
        )
    return on_tool_calls(run, turn.tool_calls)


def on_truncated(run: RunLoop, turn: ModelTurn) -> Stop | None:
    if run.counts.truncations >= run.settings.limits.max_truncation_retries:
        error = "the reply was cut off at the output token limit"
        return Stop(StopReason.TRUNCATED, None, error)
    run.counts.truncations += 1
    run.warn(WarningKind.TRUNCATED, "reply cut off at the output limit; nothing in it was run")
    run.calls.refuse(turn.tool_calls, "the reply was cut off", "reply_cut_off")
    run.history.append(Message(role="user", content=truncated_notice(), kind="truncated"))
    return None


def on_format_error(run: RunLoop, turn: ModelTurn) -> Stop | None:
    counts = run.counts
    counts.format_errors += 1
    if turn.format_error is not None:
        kind, notice = WarningKind.FORMAT_ERROR, format_error_notice(turn.format_error)
    else:
        kind, notice = WarningKind.EMPTY_REPLY, empty_reply_notice()
    run.warn(kind, notice, count=counts.format_errors)
    run.calls.refuse(turn.tool_calls, "the reply could not be read", "reply_unreadable")
    run.history.append(Message(role="user", content=notice, kind="format_error"))
    if counts.format_errors >= run.settings.limits.max_format_errors:
        error = f"{counts.format_errors} replies in a row were unusable"
        return Stop(StopReason.FORMAT_ERRORS, None, error)
    return None


def on_tool_calls(run: RunLoop, calls: tuple[ToolCall, ...]) -> Stop | None:
    if run.budget.model_calls_left <= 0:
        run.warn(WarningKind.NOT_EXECUTED, "no model call is left to read the results")
        error = "the model still called tools on its last call"
        return Stop(StopReason.MAX_MODEL_CALLS, None, error)
    if run.budget.tool_calls_left <= 0:
        run.warn(WarningKind.NOT_EXECUTED, "no tool call is left")
        error = "the model still called tools after the limit"
        return Stop(StopReason.MAX_TOOL_CALLS, None, error)
    outcome = run.calls.run(calls)
    if run.calls.deferrals.waits:
        pending = run.calls.deferrals.pending()
        error = f"{len(pending)} call(s) wait for approval: reactloop approve, then resume"
        return Stop(StopReason.AWAITING_APPROVAL, None, error, pending=pending)
    if outcome.cancelled:
        return Stop(StopReason.CANCELLED, None, "interrupted while a tool ran")
    if outcome.loop is not None:
        return last_word(run, StopReason.LOOP_DETECTED, outcome.loop)
    if run.budget.timed_out():
        return Stop(StopReason.TIMEOUT, None, TOOLS_OUTLASTED)
    return None


def last_word(run: RunLoop, reason: StopReason, error: str) -> Stop:
    """Before stopping for ``reason``, let the model answer once more, without tools."""
    if (
        not run.settings.limits.wind_down
        or run.settings.cancel.is_set()
        or run.journal_error is not None
        or run.budget.stop_before_model_call() is not None
    ):
        return Stop(reason, None, error)
    notice = loop_notice()
    run.history.append(Message(role="user", content=notice, kind="wind_down"))
    run.counts.wound_down = True
    run.warn(WarningKind.WIND_DOWN, notice)
    run.counts.step += 1
    run.events.step = run.counts.step
    turn = run.ask_model(answer_now=True)
    if isinstance(turn, ModelFailure):
        return Stop(reason, None, f"{error}; then: {turn.message}")
    return after_last_word(run, reason, error, run.record_turn(turn))


def after_last_word(run: RunLoop, reason: StopReason, error: str, turn: ModelTurn) -> Stop:
    """The stop once the model had its last word (``turn``, in the history)."""
    if turn.finish_reason == "length":  # a cut reply is never an answer, forced or not
        return Stop(reason, None, f"{error}; then the reply was cut off at the token limit")
    if turn.finish_reason == "content_filter":
        return Stop(reason, None, f"{error}; then: {refused(turn)}")
    answer, output = turn.answer, None
    judged = run.answers.judge(turn) if run.answers is not None else None
    if judged is not None:
        answer, output = judged.text, judged.value
    return Stop(reason, answer, error, answer is not None, output)
