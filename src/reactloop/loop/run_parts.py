"""What one run is made of besides its loop: the parts ``RunLoop`` builds at the start, and the
``RunResult`` it hands back at the end.

- ``run_parts``: the call runner (budget, loop guard, approver, executor), the typed-answer gate,
  the context keeper (compaction), the budget notices and the completion checks, each keeping
  its counters in the run's ``RunCounts`` (the budget's);
- ``opening``: the messages a run starts from; ``with_own_toolbox``: the run's own toolbox;
  ``run_start_event``: what the ``run_start`` event records (the workspace as the run found it
  included);
- ``final_stop``: how the run ends once its journal's state is known; ``run_result``: the
  ``RunResult`` of a stop; ``stop_event``: what the ``stop`` event records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

from reactloop.history import History
from reactloop.journal.emitter import Emitter
from reactloop.journal.events import Observer, micros
from reactloop.journal.schema import RunStartEvent, StopEvent
from reactloop.limits import StopReason
from reactloop.loop.budget import Budget, BudgetNotices
from reactloop.loop.compaction import ContextKeeper
from reactloop.loop.completion_checks import FinishChecks
from reactloop.loop.loop_guard import LoopGuard
from reactloop.loop.settings import RunSettings
from reactloop.loop.tool_calls import CallRunner
from reactloop.loop.typed_answers import AnswerGate
from reactloop.messages import Message, ModelTurn
from reactloop.result import RunResult, Stop
from reactloop.tools.search import SEARCH_USED


class RunParts(NamedTuple):  # a tuple: cheaper to define than a dataclass (import time)
    calls: CallRunner
    answers: AnswerGate | None
    context: ContextKeeper
    budget_notes: BudgetNotices | None
    checks: FinishChecks | None


def model_at(model: Any, turns: int) -> None:
    """A model with state of its own (``ScriptedModel``) continues from the turn a resumed
    run had reached; a wrapping adapter (text ReAct) passes it on to the model it wraps."""
    seen = 0
    while model is not None and seen < 8:
        resume_at = getattr(model, "resume_at", None)
        if callable(resume_at):
            resume_at(turns)
            return
        model, seen = getattr(model, "inner", None), seen + 1


def run_parts(
    settings: RunSettings,
    budget: Budget,
    history: History,
    events: Emitter,
    prior: Sequence[Message],
) -> RunParts:
    """The parts of one run; ``prior``: the messages of the runs it continues."""
    calls = CallRunner(
        toolbox=settings.toolbox,
        budget=budget,
        guard=LoopGuard(settings.limits),
        approve=settings.approve,
        emit=events.emit,
        warn=events.warn,
        record=history.append,
        observed=events.observed,
    )
    calls.executor.cancel = settings.cancel
    if prior:
        calls.ids.remember(call for m in prior for call in m.tool_calls)
    answers = None
    if settings.output is not None:
        answers = AnswerGate(
            settings.output,
            calls,
            warn=events.warn,
            record=history.append,
            limit=settings.limits.max_format_errors,
            counts=budget.counts,
        )
    context = ContextKeeper.for_run(settings, budget, history, events)
    notes = settings.limits.budget_notices
    checks = FinishChecks.for_run(
        settings.checklist,
        settings.verify,
        history=history,
        emit=events.emit,
        warn=events.warn,
        observed=events.observed,
        counts=budget.counts,
    )
    return RunParts(
        calls=calls,
        answers=answers,
        context=context,
        budget_notes=BudgetNotices(budget) if notes else None,
        checks=checks,
    )


def opening(history: Sequence[Message], instructions: str | None) -> list[Message]:
    """The messages a run starts from: the system message first, then ``history``."""
    if instructions and not (history and history[0].role == "system"):
        return [Message(role="system", content=instructions), *history]
    return list(history)


def with_own_toolbox(settings: RunSettings) -> RunSettings:
    """``settings`` with a toolbox of the run's own (its own kept outputs, its observation
    budget)."""
    toolbox = settings.toolbox.for_run(settings.limits.max_observation_chars)
    return dataclasses.replace(settings, toolbox=toolbox)


def run_start_event(
    settings: RunSettings, task: str, prior: int, continues: str | None
) -> RunStartEvent:
    """The ``run_start`` event; ``prior``: how many messages of earlier runs it continues
    (``continues`` names their journal, when they had one). A first run whose tools use a
    workspace records it as it is now, before any tool ran (``workspace_record``); a run with
    deferred tools, its search in ``config.tool_search_used`` (who searches, what)."""
    from reactloop.journal.workspace_record import record_for  # an observed run's only

    config = {k: v for k, v in settings.config.items() if k != SEARCH_USED}  # another run's
    if (search := settings.toolbox.search) is not None:  # what resume compares (search_differs)
        used = {"mode": "native" if search.native else "own", "deferred": search.index.names}
        config[SEARCH_USED] = used
    return RunStartEvent(
        task=task,
        model=settings.model.name,
        protocol=settings.protocol,
        tools=[spec.to_dict() for spec in settings.toolbox.specs],
        limits=vars(settings.limits),
        instructions=settings.instructions,
        config=config,
        output_schema=None if settings.output is None else settings.output.schema,
        continues={"trace": continues, "messages": prior} if prior else None,
        workspace=None if prior else record_for(settings.config),
    )


def final_stop(stop: Stop, journal_error: str | None) -> Stop:
    """A run whose journal failed ends with ``journal_error``, whatever else it ended by."""
    if journal_error is None or stop.reason is StopReason.JOURNAL_ERROR:
        return stop
    error = f"{journal_error} (the run itself ended by {stop.reason})"
    return Stop(StopReason.JOURNAL_ERROR, stop.answer, error, stop.forced, stop.output)


def refused(turn: ModelTurn) -> str:
    """The error of a reply the provider's filter stopped, with the reason the model gave."""
    notices = turn.notices if isinstance(turn.notices, tuple | list) else ()
    reasons = [n[1] for n in notices if isinstance(n, tuple) and len(n) == 2 and n[0] == "refusal"]
    why = f": {reasons[0]}" if reasons and isinstance(reasons[0], str) else ""
    return f"the provider's content filter stopped the reply{why}"


def stop_event(stop: Stop, result: RunResult) -> StopEvent:
    """The ``stop`` event."""
    return StopEvent(
        stop_reason=str(stop.reason),
        answer=stop.answer,
        error=stop.error,
        error_kind=stop.error_kind,
        forced=stop.forced,
        model_calls=result.model_calls,
        tool_calls=result.tool_calls,
        usage=result.usage.to_dict(),
        cost=result.cost,
        seconds=micros(result.seconds),
        pending=[call.to_dict() for call in stop.pending] if stop.pending else None,
    )


def run_result(
    settings: RunSettings, budget: Budget, history: History, warnings: Sequence[str], stop: Stop
) -> RunResult:
    return RunResult(
        answer=stop.answer,
        stop_reason=stop.reason,
        model_calls=budget.model_calls,
        tool_calls=budget.tool_calls,
        usage=budget.usage,
        cost=budget.cost,
        history=tuple(history),
        seconds=budget.elapsed,
        error=stop.error,
        trace=_trace_path((settings.journal, *settings.observers)),
        warnings=tuple(warnings),
        forced=stop.forced,
        output=stop.output,
        error_kind=stop.error_kind,
        pending=stop.pending,
    )


def _trace_path(observers: Sequence[Observer | None]) -> str | None:
    for observer in observers:
        path = getattr(observer, "path", None)
        if path is not None:
            return str(path)
    return None
