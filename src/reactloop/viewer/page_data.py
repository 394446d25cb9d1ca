"""What the viewer shows, read from journal events: the run's summary and its steps."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.messages import Usage
from reactloop.models.redacted import RedactedReasoning, redacted_reasoning
from reactloop.support.json_decode import json_number
from reactloop.usage import usage_from
from reactloop.viewer.compaction_view import CompactionView, compaction_view


@dataclass(frozen=True, kw_only=True)
class CommandStatus:
    """How a command a tool ran ended (the ``bash`` tool's ``exit_code``, ``signal``...)."""

    exit_code: int
    signal: str | None = None
    timed_out: bool = False

    @property
    def failed(self) -> bool:
        return self.exit_code != 0 or self.timed_out


@dataclass(kw_only=True)
class ToolView:
    call_id: str
    name: str
    arguments: str
    ok: bool | None = None
    output: Any = None
    error: str | None = None
    truncated: bool = False
    full_output_path: str | None = None
    executed: bool = True
    seconds: float | None = None
    command: CommandStatus | None = None
    nested_html: str = ""  # the sub-agent this call ran, its steps (``viewer/tree.py``)


@dataclass(kw_only=True)
class TurnView:
    ordinal: int = 0  # which ``turn`` event of the journal this is, from 0
    text: str = ""
    reasoning: str | None = None
    redacted: RedactedReasoning | None = None  # reasoning the provider sent only as opaque data
    finish_reason: str = ""
    format_error: str | None = None
    final_answer: str | None = None
    usage: Usage = field(default_factory=Usage)
    usage_estimated: bool = False
    seconds: float | None = None
    raw: Any = None


@dataclass(kw_only=True)
class WarningView:
    kind: str
    message: str


@dataclass(kw_only=True)
class CheckView:
    """A completion check (``completion_checks.py``): the checklist shown, or the verify result."""

    kind: str
    passed: bool
    detail: str


@dataclass(kw_only=True)
class StepView:
    number: int
    wind_down: bool = False
    n_messages: int | None = None
    turns: list[TurnView] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)
    warnings: list[WarningView] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # budget notices, after the results
    checks: list[CheckView] = field(default_factory=list)  # completion checks of an answer
    compactions: list[CompactionView] = field(default_factory=list)  # made after this step


@dataclass(kw_only=True)
class RunView:
    """One run of the journal; ``number`` from 1 (a ``reactloop chat`` journal has one run
    per turn)."""

    number: int = 1
    task: str = ""
    model: str = ""
    protocol: str = ""
    tool_names: list[str] = field(default_factory=list)
    stop: dict[str, Any] | None = None
    run_warnings: list[WarningView] = field(default_factory=list)
    steps: list[StepView] = field(default_factory=list)


def build_views(events: Sequence[Mapping[str, Any]]) -> list[RunView]:
    """The runs of a journal, each with its events grouped by step, in the order they
    happened; a journal cut before its first ``run_start`` is one run without a task."""
    reader = _Reader()
    for event in events:
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

    def add(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        number = _int(event.get("step"))
        if kind == "run_start":
            self._start_run(event)
        elif kind == "stop":
            self.view.stop = dict(event)
        elif kind == "warning" and number == 0:
            self.view.run_warnings.append(_warning(event))
        else:
            self._add_to_step(self._step(number), kind, event)

    def _start_run(self, event: Mapping[str, Any]) -> None:
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

    def _add_to_step(self, step: StepView, kind: Any, event: Mapping[str, Any]) -> None:
        if kind == "request":
            self.request_time = json_number(event.get("t"))
            step.wind_down = step.wind_down or bool(event.get("wind_down"))
            step.n_messages = _int(event.get("n_messages"))
        elif kind == "response":
            self.pending_raw = event.get("raw")
        elif kind == "turn":
            turn = _turn(event, self.request_time, self.pending_raw)
            turn.ordinal = self.turn_count
            self.turn_count += 1
            self.pending_raw = None
            step.turns.append(turn)
        elif kind == "tool_call":
            call = _tool_call(event)
            if not any(t.call_id == call.call_id and t.ok is None for t in step.tools):
                step.tools.append(call)  # (a resumed run announces a call in flight again)
        elif kind == "tool_result":
            _attach_result(step, event)
        elif kind == "warning":
            step.warnings.append(_warning(event))
        elif kind == "check":
            step.checks.append(_check(event))
        elif kind == "resume":  # the run goes on after a kill or a stop: marked where it did
            step.warnings.append(WarningView(kind="resumed", message=resumed_line(event)))
        elif kind == "budget_notice":
            step.notices.append(str(event.get("line") or ""))
        elif kind == "compaction":  # a summary's raw reply is its own, not the next turn's
            self.compactions += 1
            step.compactions.append(compaction_view(event, self.pending_raw, self.compactions))
            self.pending_raw = None


def _read_start(view: RunView, event: Mapping[str, Any]) -> None:
    view.task = str(event.get("task") or "")
    view.model = str(event.get("model") or "")
    view.protocol = str(event.get("protocol") or "")
    tools = event.get("tools")
    tools = tools if isinstance(tools, list) else []
    view.tool_names = [str(t.get("name")) for t in tools if isinstance(t, Mapping)]


def _turn(event: Mapping[str, Any], request_time: float | None, raw: Any) -> TurnView:
    data = event.get("turn")
    turn: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    usage = turn.get("usage")
    seconds = json_number(event.get("seconds"))
    t = json_number(event.get("t"))
    if seconds is None and t is not None and request_time is not None:
        seconds = max(t - request_time, 0.0)
    return TurnView(
        text=str(turn.get("text") or ""),
        reasoning=_str_or_none(turn.get("reasoning")),
        redacted=redacted_reasoning(turn.get("raw_message")),
        finish_reason=str(turn.get("finish_reason") or ""),
        format_error=_str_or_none(turn.get("format_error")),
        final_answer=_str_or_none(turn.get("final_answer")),
        usage=usage_from(usage),
        seconds=seconds,
        raw=raw,
    )


def _tool_call(event: Mapping[str, Any]) -> ToolView:
    data = event.get("call")
    call: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    return ToolView(
        call_id=str(call.get("id") or ""),
        name=str(call.get("name") or "?"),
        arguments=str(call.get("arguments") or ""),
    )


def _attach_result(step: StepView, event: Mapping[str, Any]) -> None:
    data = event.get("result")
    result: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
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


def command_status(output: Any) -> CommandStatus | None:
    """The exit status in a tool's output, when it reports one as an integer ``exit_code``."""
    if not isinstance(output, Mapping):
        return None
    code = output.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    signal = output.get("signal")
    return CommandStatus(
        exit_code=code,
        signal=signal if isinstance(signal, str) and signal else None,
        timed_out=output.get("timed_out") is True,
    )


def _check(event: Mapping[str, Any]) -> CheckView:
    items = event.get("items")
    listed = "\n".join(f"- {item}" for item in items) if isinstance(items, list) else ""
    output = event.get("output")
    return CheckView(
        kind=str(event.get("kind") or "check"),
        passed=event.get("passed") is True,
        detail=listed or ("" if output is None else str(output)),
    )


def resumed_line(event: Mapping[str, Any]) -> str:
    """What a ``resume`` event says: why, and the calls that were in flight."""
    why = event.get("why")
    after = "its process died" if why == "no_stop" else f"it stopped {why}"
    calls = [c for c in event.get("calls") or () if isinstance(c, Mapping)]
    flight = ", ".join(f"{c.get('call_id')} {c.get('name')}: {c.get('state')}" for c in calls)
    torn = " (a torn last line was set aside)" if event.get("torn") else ""
    return f"resumed after {after}{torn}" + (f"; calls in flight: {flight}" if flight else "")


def _warning(event: Mapping[str, Any]) -> WarningView:
    return WarningView(
        kind=str(event.get("kind") or "warning"), message=str(event.get("message") or "")
    )


def apply_estimates(views: Sequence[RunView], usages: Sequence[Usage]) -> None:
    """Give each turn the usage estimated for it: ``usages`` has one per ``turn`` event."""
    for turn in (turn for view in views for step in view.steps for turn in step.turns):
        if turn.ordinal < len(usages):
            turn.usage = usages[turn.ordinal]
            turn.usage_estimated = True


def pretty_json_text(text: str) -> str:
    """Indented JSON when ``text`` is JSON, else the text unchanged."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text
    return json.dumps(value, ensure_ascii=False, indent=2)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
