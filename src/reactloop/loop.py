"""One run of the loop: ask the model, check its calls, run them, append the results, repeat.

``RunLoop`` holds what belongs to a single run — history, budget, loop guard, counters — and
``execute`` is the loop itself. Every decision is emitted as an event, so the journal shows why.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reactloop.calls import CallRunner
from reactloop.errors import ModelError
from reactloop.events import Event, Observer, micros
from reactloop.history import History
from reactloop.limits import Budget, StopReason
from reactloop.loopguard import LoopGuard
from reactloop.messages import Message, ModelTurn, ToolCall
from reactloop.models.base import ModelRequest
from reactloop.notices import (
    empty_reply_notice,
    format_error_notice,
    loop_notice,
    truncated_notice,
    wind_down_notice,
)
from reactloop.result import RunResult

if TYPE_CHECKING:
    from reactloop.agent import Agent

Stop = tuple[StopReason, str | None, str | None]


class RunLoop:
    """The state of one run. ``execute`` is the loop."""

    def __init__(self, agent: Agent, task: str) -> None:
        self.agent = agent
        self.observers = list(agent.observers)
        self.task = task
        self.budget = Budget(agent.limits, agent.price)
        self.history = History()
        self.step = 0
        self.sent = 0
        self.format_errors = 0
        self.truncations = 0
        self.wound_down = False
        self.model_seconds = 0.0
        self.answer_now = False
        self.warnings: list[str] = []
        self.calls = CallRunner(
            toolbox=agent.toolbox,
            budget=self.budget,
            guard=LoopGuard(agent.limits),
            approve=agent.approve,
            emit=self.emit,
            warn=self.warn,
            observed=bool(agent.observers),
        )

    def emit(self, event_type: str, /, **data: Any) -> None:
        event = Event(event_type, self.step, data)
        for observer in self.observers:
            try:
                observer(event)
            except Exception as exc:  # a broken observer must not end the run: drop it
                self.observers = [o for o in self.observers if o is not observer]
                self.warnings.append(f"observer_failed: {observer!r} raised {exc!r}; dropped")

    def warn(self, kind: str, message: str, **data: Any) -> None:
        self.warnings.append(f"{kind}: {message}")
        self.emit("warning", kind=kind, message=message, **data)

    def execute(self) -> RunResult:
        self.start()
        try:
            while True:
                stop = self.step_once()
                if stop is not None:
                    return self.finish(*stop)
        except KeyboardInterrupt:
            return self.finish(StopReason.CANCELLED, None, "interrupted")

    def start(self) -> None:
        agent = self.agent
        if agent.instructions:
            self.history.append(Message(role="system", content=agent.instructions))
        self.history.append(Message(role="user", content=self.task, kind="task"))
        self.emit(
            "run_start",
            task=self.task,
            model=agent.model.name,
            protocol=agent.protocol,
            tools=[spec.to_dict() for spec in agent.toolbox.specs],
            limits=vars(agent.limits),
            instructions=agent.instructions,
            config=agent.config,
        )

    def step_once(self) -> Stop | None:
        """One step; returns (stop reason, answer, error) when the run must end."""
        if self.agent.cancel_requested:
            return StopReason.CANCELLED, None, "cancelled"
        stop = self.budget.stop_before_model_call()
        if stop is not None:
            return stop, None, f"limit reached: {stop}"
        self.step += 1
        turn = self.ask_model()
        if isinstance(turn, str):
            ran_out = self.budget.timed_out()  # the call failed because the run's time did
            return StopReason.TIMEOUT if ran_out else StopReason.MODEL_ERROR, None, turn
        return self.handle_turn(turn)

    def ask_model(self) -> ModelTurn | str:
        wind_down = self.answer_now or self.budget.wind_down_due()
        if wind_down and not self.wound_down:
            self.wound_down = True
            notice = wind_down_notice(tools_exhausted=self.budget.tool_calls_left <= 0)
            self.history.append(Message(role="user", content=notice, kind="wind_down"))
            self.warn("wind_down", notice)
        changed = self.history.take_prefix_change()
        if changed is not None:
            self.warn("prefix_changed", f"message {changed} was rewritten", index=changed)
        tool_choice = "none" if wind_down else self.agent.tool_choice
        if self.observers:
            self.emit(
                "request",
                n_messages=len(self.history),
                messages_new=[m.to_dict() for m in self.history[self.sent :]],
                tool_choice=tool_choice,
                wind_down=wind_down,
            )
        self.sent = len(self.history)
        wire: list[Any] = []
        request = ModelRequest(
            messages=self.history,
            tools=self.agent.toolbox.specs,
            tool_choice=tool_choice,
            timeout=self.budget.seconds_left,
            step=self.step,
            on_text=self.agent.on_text,
            on_raw=wire.append,
        )
        started = time.perf_counter()
        try:
            turn = self.agent.model.complete(request)
        except ModelError as exc:
            self.budget.record_model_call_failed()
            self.emit(  # the request as sent, and why no turn came back
                "warning",
                kind="model_error",
                message=str(exc),
                request=wire[-1] if wire else None,
                seconds=micros(time.perf_counter() - started),
            )
            return str(exc)
        except Exception as exc:  # an adapter bug must not crash the harness
            self.budget.record_model_call_failed()
            self.emit("warning", kind="internal_error", message=traceback.format_exc())
            return f"{type(exc).__name__}: {exc}"
        self.budget.record_model_call(turn.usage)
        self.model_seconds = time.perf_counter() - started
        if self.observers and (turn.raw is not None or wire):
            self.emit("response", raw=turn.raw, request=wire[-1] if wire else None)
        return turn

    def record_turn(self, turn: ModelTurn) -> ModelTurn:
        turn = self.calls.unique_ids(turn, self.step)
        if self.observers:
            self.emit("turn", turn=turn.to_dict(), seconds=micros(self.model_seconds))
        self.history.append(
            Message(
                role="assistant",
                content=turn.text,
                tool_calls=turn.tool_calls,
                reasoning=turn.reasoning,
                raw=turn.raw_message,
            )
        )
        return turn

    def handle_turn(self, turn: ModelTurn) -> Stop | None:
        turn = self.record_turn(turn)
        if turn.finish_reason == "content_filter":
            return (
                StopReason.CONTENT_FILTER,
                None,
                "the provider's content filter stopped the reply",
            )
        if turn.finish_reason == "length":
            return self.on_truncated(turn)
        if turn.format_error is not None or (not turn.tool_calls and turn.answer is None):
            return self.on_format_error(turn)
        self.format_errors = 0
        if not turn.tool_calls:
            return StopReason.FINAL_ANSWER, turn.answer, None
        return self.on_tool_calls(turn.tool_calls)

    def on_truncated(self, turn: ModelTurn) -> Stop | None:
        if self.truncations >= self.agent.limits.max_truncation_retries:
            return StopReason.TRUNCATED, None, "the reply was cut off at the output token limit"
        self.truncations += 1
        self.warn("truncated", "reply cut off at the output limit; nothing in it was run")
        self.history.extend(self.calls.refuse(turn.tool_calls, "the reply was cut off"))
        self.history.append(Message(role="user", content=truncated_notice(), kind="truncated"))
        return None

    def on_format_error(self, turn: ModelTurn) -> Stop | None:
        self.format_errors += 1
        if turn.format_error is not None:
            kind, notice = "format_error", format_error_notice(turn.format_error)
        else:
            kind, notice = "empty_reply", empty_reply_notice()
        self.warn(kind, notice, count=self.format_errors)
        self.history.extend(self.calls.refuse(turn.tool_calls, "the reply could not be read"))
        self.history.append(Message(role="user", content=notice, kind="format_error"))
        if self.format_errors >= self.agent.limits.max_format_errors:
            return (
                StopReason.FORMAT_ERRORS,
                None,
                f"{self.format_errors} replies in a row were unusable",
            )
        return None

    def on_tool_calls(self, calls: tuple[ToolCall, ...]) -> Stop | None:
        if self.budget.model_calls_left <= 0:
            self.warn("not_executed", "no model call is left to read the results")
            return StopReason.MAX_MODEL_CALLS, None, "the model still called tools on its last call"
        if self.budget.tool_calls_left <= 0:
            self.warn("not_executed", "no tool call is left")
            return StopReason.MAX_TOOL_CALLS, None, "the model still called tools after the limit"
        outcome = self.calls.run(calls)
        self.history.extend(outcome.messages)
        if outcome.loop is not None:
            return self.last_word(StopReason.LOOP_DETECTED, outcome.loop)
        if self.budget.timed_out():
            return StopReason.TIMEOUT, None, "the time limit ran out while tools ran"
        return None

    def last_word(self, reason: StopReason, error: str) -> Stop:
        """Before stopping for ``reason``, let the model answer once more, without tools."""
        if (
            not self.agent.limits.wind_down
            or self.agent.cancel_requested
            or self.budget.stop_before_model_call() is not None
        ):
            return reason, None, error
        notice = loop_notice()
        self.history.append(Message(role="user", content=notice, kind="wind_down"))
        self.warn("wind_down", notice)
        self.wound_down = self.answer_now = True
        self.step += 1
        turn = self.ask_model()
        if isinstance(turn, str):
            return reason, None, f"{error}; then: {turn}"
        return reason, self.record_turn(turn).answer, error

    def finish(self, reason: StopReason, answer: str | None, error: str | None) -> RunResult:
        result = RunResult(
            answer=answer,
            stop_reason=reason,
            model_calls=self.budget.model_calls,
            tool_calls=self.budget.tool_calls,
            usage=self.budget.usage,
            cost=self.budget.cost,
            history=tuple(self.history),
            seconds=self.budget.elapsed,
            error=error,
            trace=_trace_path(self.agent.observers),
            warnings=tuple(self.warnings),
        )
        self.emit(
            "stop",
            stop_reason=str(reason),
            answer=answer,
            error=error,
            model_calls=result.model_calls,
            tool_calls=result.tool_calls,
            usage=result.usage.to_dict(),
            cost=result.cost,
            seconds=micros(result.seconds),
        )
        return result


def _trace_path(observers: Sequence[Observer]) -> str | None:
    for observer in observers:
        path = getattr(observer, "path", None)
        if path is not None:
            return str(path)
    return None
