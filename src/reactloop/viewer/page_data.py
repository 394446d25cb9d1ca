"""A journal read into the page's values (``page_views.py``): the runs, their steps in the
order they happened, each event where it belongs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import (
    BudgetNoticeEvent,
    CheckEvent,
    CompactionEvent,
    ElicitationEvent,
    RequestEvent,
    ResponseEvent,
    ResumeEvent,
    RunStartEvent,
    StopEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEvent,
    WarningEvent,
)
from reactloop.messages import Usage
from reactloop.models.redacted import redacted_reasoning
from reactloop.support.json_decode import json_number
from reactloop.usage import usage_from
from reactloop.viewer.compaction_view import compaction_view
from reactloop.viewer.page_views import (
    CheckView,
    RunView,
    StepView,
    ToolView,
    TurnView,
    WarningView,
    command_status,
)


def build_views(events: Records) -> list[RunView]:
    """The runs of a journal (its typed events, or its lines: a damaged one read for what it
    holds, ``readable_events``), each with its events grouped by step, in the order they
    happened; a journal cut before its first ``run_start`` is one run without a task."""
    reader = _Reader()
    for event in readable_events(events):
        reader.add(event)
    return reader.views


class _Reader:
    """The state between events: a turn's timing and raw reply come from earlier events."""

    def __init__(self) -> None:
        self.views = [RunView()]
        self.started = False  # the current view has read its ``run_start``
        self.by_number: dict[int, StepView] = {}
        self.request_time: float | None = None
        self.pending_raw: Any = None
        self.turn_count = 0  # over the whole journal: ``apply_estimates`` counts so
        self.compactions = 0

    @property
    def view(self) -> RunView:
        return self.views[-1]

    def add(self, event: JournalEvent) -> None:
        if isinstance(event, RunStartEvent):
            self._start_run(event)
        elif isinstance(event, StopEvent):
            self.view.stop = event.to_dict()
        elif isinstance(event, WarningEvent) and event.step == 0:
            self.view.run_warnings.append(_warning(event))
        else:
            self._add_to_step(self._step(event.step), event)

    def _start_run(self, event: RunStartEvent) -> None:
        view = self.view
        if self.started or view.steps or view.stop is not None or view.run_warnings:
            self.views.append(RunView(number=len(self.views) + 1))
            self.by_number = {}
        self.started = True
        _read_start(self.view, event)

    def _step(self, number: int) -> StepView:
        step = self.by_number.get(number)
        if step is None:
            step = self.by_number[number] = StepView(number=number)
            self.view.steps.append(step)
        return step

    def _add_to_step(self, step: StepView, event: JournalEvent) -> None:
        """The model's side of a step here; what came of its calls in ``_add_outcome``."""
        if isinstance(event, RequestEvent):
            self.request_time = json_number(event.t)
            step.wind_down = step.wind_down or event.wind_down
            step.n_messages = event.n_messages
        elif isinstance(event, ResponseEvent):
            self.pending_raw = event.raw
        elif isinstance(event, TurnEvent):
            turn = _turn(event, self.request_time, self.pending_raw)
            turn.ordinal = self.turn_count
            self.turn_count += 1
            self.pending_raw = None
            step.turns.append(turn)
        elif isinstance(event, CompactionEvent):  # a summary's raw reply is its own
            self.compactions += 1
            step.compactions.append(compaction_view(event, self.pending_raw, self.compactions))
            self.pending_raw = None
        else:
            _add_outcome(step, event)


def _add_outcome(step: StepView, event: JournalEvent) -> None:
    if isinstance(event, ToolCallEvent):
        call = _tool_call(event)
        if not any(t.call_id == call.call_id and t.ok is None for t in step.tools):
            step.tools.append(call)  # (a resumed run announces a call in flight again)
    elif isinstance(event, ToolResultEvent):
        _attach_result(step, event)
    elif isinstance(event, WarningEvent):
        step.warnings.append(_warning(event))
    elif isinstance(event, CheckEvent):
        step.checks.append(_check(event))
    elif isinstance(event, ResumeEvent):  # the run goes on after a kill or a stop: marked
        step.warnings.append(WarningView(kind="resumed", message=resumed_line(event)))
    elif isinstance(event, BudgetNoticeEvent):
        step.notices.append(event.line)
    elif isinstance(event, ElicitationEvent):  # a server's question to the person, answered
        step.warnings.append(WarningView(kind="elicitation", message=question_line(event)))


def _read_start(view: RunView, event: RunStartEvent) -> None:
    view.task = str(event.task or "")
    view.model = str(event.model or "")
    view.protocol = str(event.protocol or "")
    tools = event.tools if isinstance(event.tools, list) else []
    view.tool_names = [str(t.get("name")) for t in tools if isinstance(t, Mapping)]


def _turn(event: TurnEvent, request_time: float | None, raw: Any) -> TurnView:
    turn = event.turn
    seconds = json_number(event.seconds)
    t = json_number(event.t)
    if seconds is None and t is not None and request_time is not None:
        seconds = max(t - request_time, 0.0)
    return TurnView(
        text=str(turn.get("text") or ""),
        reasoning=_str_or_none(turn.get("reasoning")),
        redacted=redacted_reasoning(turn.get("raw_message")),
        finish_reason=str(turn.get("finish_reason") or ""),
        format_error=_str_or_none(turn.get("format_error")),
        final_answer=_str_or_none(turn.get("final_answer")),
        usage=usage_from(turn.get("usage")),
        seconds=seconds,
        raw=raw,
    )


def _tool_call(event: ToolCallEvent) -> ToolView:
    call = event.call
    return ToolView(
        call_id=str(call.get("id") or ""),
        name=str(call.get("name") or "?"),
        arguments=str(call.get("arguments") or ""),
    )


def _attach_result(step: StepView, event: ToolResultEvent) -> None:
    result = event.result
    call_id = str(result.get("call_id") or "")
    target = next((t for t in step.tools if t.call_id == call_id and t.ok is None), None)
    if target is None:
        target = ToolView(call_id=call_id, name=str(result.get("name") or "?"), arguments="")
        step.tools.append(target)
    target.ok = bool(result.get("ok"))
    target.output = result.get("output")
    target.error = _str_or_none(result.get("error"))
    target.truncated = bool(result.get("truncated"))
    target.full_output_path = _str_or_none(result.get("full_output_path"))
    target.executed = result.get("executed") is not False
    target.seconds = json_number(result.get("seconds"))
    target.command = command_status(target.output)


def _check(event: CheckEvent) -> CheckView:
    listed = "\n".join(f"- {item}" for item in event.items or ())
    return CheckView(
        kind=event.kind or "check",
        passed=event.passed,
        detail=listed or ("" if event.output is None else event.output),
    )


def resumed_line(event: ResumeEvent) -> str:
    """What a ``resume`` event says: why, and the calls that were in flight."""
    after = "its process died" if event.why == "no_stop" else f"it stopped {event.why}"
    calls = [c for c in event.calls if isinstance(c, Mapping)]
    flight = ", ".join(f"{c.get('call_id')} {c.get('name')}: {c.get('state')}" for c in calls)
    torn = " (a torn last line was set aside)" if event.torn else ""
    return f"resumed after {after}{torn}" + (f"; calls in flight: {flight}" if flight else "")


def question_line(event: ElicitationEvent) -> str:
    """An ``elicitation`` event in a line: who asked what, for which call, and the answer."""
    said = event.action if event.content is None else f"{event.action} {json.dumps(event.content)}"
    left = f" ({', '.join(event.omitted)} not recorded)" if event.omitted else ""
    return f"{event.server} asks ({event.call_id}): {event.message} → {said}{left}"


def _warning(event: WarningEvent) -> WarningView:
    return WarningView(kind=str(event.kind or "warning"), message=event.message)


def apply_estimates(views: Sequence[RunView], usages: Sequence[Usage]) -> None:
    """Give each turn the usage estimated for it: ``usages`` has one per ``turn`` event."""
    for turn in (turn for view in views for step in view.steps for turn in step.turns):
        if turn.ordinal < len(usages):
            turn.usage = usages[turn.ordinal]
            turn.usage_estimated = True


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
