"""What one run is made of besides its loop: the parts ``RunLoop`` builds at the start, and the
``RunResult`` it hands back at the end.

- ``run_parts``: the call runner (budget, loop guard, approver, executor), the typed-answer gate,
  the context keeper (compaction), the budget notices and the completion checks;
- ``opening``: the messages a run starts from; ``with_own_toolbox``: the run's own toolbox;
- ``run_result``: the ``RunResult`` of a stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reactloop.answers import AnswerGate
from reactloop.calls import CallRunner
from reactloop.compaction import ContextKeeper
from reactloop.events import Emitter, Observer
from reactloop.finishcheck import FinishChecks
from reactloop.history import History
from reactloop.limits import Budget, BudgetNotices
from reactloop.loopguard import LoopGuard
from reactloop.messages import Message
from reactloop.result import RunResult, Stop
from reactloop.settings import RunSettings


@dataclass(frozen=True, slots=True)
class RunParts:
    calls: CallRunner
    answers: AnswerGate | None
    context: ContextKeeper
    budget_notes: BudgetNotices | None
    keeping: bool  # whether the context keeper or the budget notices act between steps
    checks: FinishChecks | None


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
        calls.remember([call for m in prior for call in m.tool_calls])
    answers = None
    if settings.output is not None:
        answers = AnswerGate(
            settings.output,
            calls,
            warn=events.warn,
            record=history.append,
            limit=settings.limits.max_format_errors,
        )
    context = ContextKeeper.for_run(settings, budget, history, events)
    notes = settings.limits.budget_notices
    checks = FinishChecks.for_run(
        settings.checklist, settings.verify, history=history, emit=events.emit, warn=events.warn
    )
    return RunParts(
        calls=calls,
        answers=answers,
        context=context,
        budget_notes=BudgetNotices(budget) if notes else None,
        keeping=bool(context.limited or notes),
        checks=checks,
    )


def opening(history: Sequence[Message], instructions: str | None) -> list[Message]:
    """The messages a run starts from: the system message first, then ``history``."""
    if instructions and not (history and history[0].role == "system"):
        return [Message(role="system", content=instructions), *history]
    return list(history)


def with_own_toolbox(settings: RunSettings) -> RunSettings:
    """``settings`` with a toolbox of the run's own (its own kept outputs, its observation
    budget): a copy of the frozen value made directly, at a quarter of ``replace``'s cost."""
    copy = object.__new__(RunSettings)
    copy.__dict__.update(settings.__dict__)
    limit = settings.limits.max_observation_chars
    copy.__dict__["toolbox"] = settings.toolbox.for_run(limit)
    return copy


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
    )


def _trace_path(observers: Sequence[Observer | None]) -> str | None:
    for observer in observers:
        path = getattr(observer, "path", None)
        if path is not None:
            return str(path)
    return None
