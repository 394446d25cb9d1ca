"""``CallRunner``: decides which of a turn's tool calls run, runs them, and reports.

Each call is prepared once (``Toolbox.prepare``: decoded and validated). Then, in the model's
order: the tool-call budget, the loop guard and the approval policy may refuse it (the model
gets an error observation saying why); the rest run through the call runtime's
``ToolExecutor`` (``runtime/``) under the run's deadline, each judged after the calls before
it ran (a turn of only read-only calls is judged first, then run concurrently). Before a call
runs, a ``tool_start`` event is written ahead of it (so that a run killed while a tool ran
knows the call may have run: resume calls it *uncertain*); every result is recorded as soon as
it is known, so a run cancelled in the middle of a turn keeps what ran; ``close_open`` answers
the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.guard_state import Effects
from reactloop.journal.schema import ToolCallEvent, ToolResultEvent, ToolStartEvent
from reactloop.journal.warning_kinds import WarningKind
from reactloop.loop.approval_asked import asked
from reactloop.loop.budget import Budget
from reactloop.loop.call_ids import CallIds
from reactloop.loop.deferrals import Deferrals
from reactloop.loop.loop_guard import LoopGuard, Verdict, effects_of
from reactloop.loop.runtime.executor import ToolExecutor
from reactloop.loop.runtime.unfinished import GAVE_UP
from reactloop.messages import Message, ModelTurn, NotRun, ToolCall, ToolResult, not_executed
from reactloop.tools.prepared import Approver, Defer, PreparedCall
from reactloop.tools.toolbox import Toolbox

Emit = Callable[[JournalEvent], None]  # ``Emitter.emit``


class Outcome(NamedTuple):  # a tuple: cheaper to define and to make than a dataclass
    loop: str | None = None  # why the run stops for a loop, if it does
    cancelled: bool = False  # a tool was interrupted: the run ends ``cancelled``


class CallRunner:
    def __init__(
        self,
        *,
        toolbox: Toolbox,
        budget: Budget,
        guard: LoopGuard,
        approve: Approver | None,
        emit: Emit,
        warn: Callable[..., None],
        record: Callable[[Message], None],
        observed: bool = True,
    ) -> None:
        self.toolbox = toolbox
        self.budget = budget
        self.guard = guard
        self.approve = approve
        self.emit = emit
        self.warn = warn
        self.record = record
        self.observed = observed
        self.executor = ToolExecutor(toolbox)
        self.ids = CallIds()  # made unique here: ``take_turn``
        self._open: dict[str, ToolCall] = {}  # calls of the turn without a result yet
        self._announced: set[str] = set()  # of those, the ones with a ``tool_call`` event
        self.deferrals = Deferrals(warn)  # the calls that wait for a person's decision
        self._held: list[tuple[str, str, dict[str, Any]]] = []  # warnings said once counted

    def take_turn(self, turn: ModelTurn, step: int) -> ModelTurn:
        """``turn`` with every call's id unique in the run (``call_ids.py``), its calls now
        open: each must get a result, whatever happens."""
        turn = self.ids.unique(turn, step)
        self.open_turn(turn.tool_calls)
        self.guard.start_turn()  # before its ``turn`` event, as the journal's fold starts it
        return turn

    def open_turn(self, calls: Sequence[ToolCall]) -> None:
        """The turn's calls are in the history: each must get a result, whatever happens."""
        self._open = {call.id: call for call in calls}
        if self._announced:
            self._announced = set()

    def run(self, calls: Sequence[ToolCall]) -> Outcome:
        if len(calls) == 1:
            outcome = self._run_in_order((self.toolbox.prepare(calls[0]),))
        else:
            prepared = list(map(self.toolbox.prepare, calls))
            if all(p.read_only for p in prepared):
                outcome = self._run_concurrently(prepared)
            else:
                outcome = self._run_in_order(prepared)
        if outcome.cancelled:
            self.close_open("cancelled")
        return outcome

    def _run_in_order(self, batch: Sequence[PreparedCall]) -> Outcome:
        """Judge each call after the ones before it ran: their side effects reset the loop
        guard, and the approver is asked about the state they left."""
        loop: str | None = None
        executor = self.executor
        for prepared in batch:
            if executor.interrupted:
                break
            refusal: ToolResult | None
            if self.deferrals.waits:  # a call put off: the rest of the turn waits with it
                self._announce(prepared.call)
                refusal = self._defer(prepared)
                self._say_held()
            else:
                refusal, loop = self._admit(prepared, loop)
            if refusal is None:
                self._start(prepared)
                refusal = executor.run_one(prepared, self.budget.deadline)
            self._report(prepared, refusal)
        if loop is None and not executor.interrupted:
            return _RAN
        return Outcome(loop, executor.interrupted)

    def _run_concurrently(self, batch: Sequence[PreparedCall]) -> Outcome:
        """Read-only calls cannot change what the others see: judge all, then run them together."""
        results: list[ToolResult | None] = []  # None: to run
        loop: str | None = None
        for prepared in batch:
            refusal, loop = self._admit(prepared, loop)
            results.append(refusal)
            if refusal is None:
                self._start(prepared)
        to_run = [p for p, result in zip(batch, results, strict=True) if result is None]
        executed = iter(self.executor.run_batch(to_run, self.budget.deadline))
        for prepared, result in zip(batch, results, strict=True):
            self._report(prepared, result if result is not None else next(executed))
        interrupted = self.executor.interrupted
        return _RAN if loop is None and not interrupted else Outcome(loop, interrupted)

    def _admit(
        self, prepared: PreparedCall, loop: str | None
    ) -> tuple[ToolResult | None, str | None]:
        """A refusal (None: run it, and count it), and the loop message once one is found. A
        call the guard judges is judged before its ``tool_call`` event, which says so
        (``effects``), and counted after it (the fold counts it at its ``tool_start``)."""
        call, budget = prepared.call, self.budget
        if loop is not None:
            self._announce(call)
            return _refused(call, f"not run: the run stopped ({loop})", "run_stopped"), loop
        if budget.tool_calls_left > 0 and not budget.timed_out():
            effects = effects_of(prepared.tool)
            verdict = self.guard.check(call, prepared.arguments, key=prepared.key, effects=effects)
            self._announce(call, effects)
            refusal, loop = self._judged(prepared, verdict)
        else:
            self._announce(call)
            refusal = self._over_budget(call)
        if self._held:  # said once the count is right again, as the journal's fold counts
            self._say_held()
        return refusal, loop

    def _over_budget(self, call: ToolCall) -> ToolResult:
        """The refusal of a call the budget has no room for: no tool call left, or no time."""
        limits = self.budget.limits
        if self.budget.tool_calls_left <= 0:
            limit = limits.max_tool_calls
            self.warn(WarningKind.BUDGET, f"tool call limit ({limit}) reached; {call.name} not run")
            error = f"not run: the tool call limit ({limit}) is reached"
            return _refused(call, error, "tool_call_limit")
        said = f"time limit ({limits.max_seconds} s) reached; {call.name} not run"
        self._held.append((WarningKind.BUDGET, said, {}))
        error = f"not run: the time limit ({limits.max_seconds} s) is reached"
        return _refused(call, error, "time_limit")

    def _say_held(self) -> None:
        for kind, message, data in self._held:
            self.warn(kind, message, **data)
        self._held.clear()

    def _start(self, prepared: PreparedCall) -> None:
        """The write-ahead record: the call is about to run (its result follows it)."""
        if self.observed:
            call = prepared.call
            self.emit(ToolStartEvent(call_id=call.id, name=call.name, arguments=call.arguments))

    def _announce(self, call: ToolCall, effects: Effects | None = None) -> None:
        """The ``tool_call`` event (only observers need to know which calls had theirs);
        ``effects``: the loop guard judged the call."""
        if self.observed:
            self._announced.add(call.id)
            self.emit(ToolCallEvent(call=call.to_dict(), effects=effects))

    def refuse(self, calls: Sequence[ToolCall], reason: str, not_run: NotRun) -> None:
        """Answer calls that will not run, so that every call in the history has its result."""
        self.open_turn(calls)
        self.close_open(reason, not_run)

    def answer(self, call: ToolCall, result: ToolResult) -> None:
        """Report a result the loop made itself, for a call that no tool runs (``final_answer``)."""
        self._announce(call)
        self._report_call(call, result)

    def report(self, call: ToolCall, result: ToolResult) -> None:
        """Report a result the loop made itself for a call whose ``tool_call`` is already in
        the journal (a call of an interrupted run, answered on resume)."""
        self._report_call(call, result)

    def close_open(self, reason: str, not_run: NotRun = "stopped") -> None:
        """Answer every call of the turn still without a result: ``not executed: reason``."""
        for call in list(self._open.values()):
            if call.id not in self._announced:
                self._announce(call)
            self._report_call(call, _refused(call, not_executed(reason), not_run))

    def _judged(
        self, prepared: PreparedCall, verdict: Verdict
    ) -> tuple[ToolResult | None, str | None]:
        """The refusal of a call the guard judged (None: run it, counted), and a loop's message."""
        call = prepared.call
        if verdict.action == "run":
            if not self.budget.take_tool_call():  # a sub-agent beside this run took the last
                return self._over_budget(call), None
            refusal = None if self.approve is None else self._ask_approval(prepared)
            if refusal is not None:
                self.budget.give_back_tool_call()
            return refusal, None
        evidence = {"evidence": verdict.evidence} if verdict.evidence else {}
        self._held.append((verdict.kind, verdict.message, {"call_id": call.id, **evidence}))
        if verdict.action == "stop":
            error = f"not run: loop detected ({verdict.message})"
            return _refused(call, error, "loop_detected"), verdict.message
        return _refused(call, verdict.message, "loop_guard"), None

    def _ask_approval(self, prepared: PreparedCall) -> ToolResult | None:
        tool, approve = prepared.tool, self.approve
        if approve is None or tool is None or tool.read_only or prepared.values is None:
            return None  # a call that cannot run is not asked about: it gets its error
        try:  # a Ctrl-C at its question, or the time limit, may end it (``custody.py``)
            answer = asked(approve, prepared, tool, self.budget.deadline)
        except KeyboardInterrupt:  # the user cancelling: the run ends ``cancelled``
            self.executor.interrupted = True
            error = "not run: the run was cancelled at its approval"
            return _refused(prepared.call, error, "cancelled")
        if answer is True:
            return None
        if isinstance(answer, Defer):
            return self._defer(prepared)
        reason = answer if isinstance(answer, str) and answer else "the user declined this call"
        self._held.append((WarningKind.DECLINED, reason, {"call_id": prepared.id}))
        return _refused(prepared.call, f"not run: {reason}", "declined")

    def _defer(self, prepared: PreparedCall) -> ToolResult:
        """Put a call off: it gets no result now (the run stops ``awaiting_approval``)."""
        self.deferrals.own.append(prepared)
        said = f"{prepared.name} waits for approval"
        self._held.append((WarningKind.DEFERRED, said, {"call_id": prepared.id}))
        return _refused(prepared.call, "deferred", "deferred")

    def report_given_up(self, prepared: PreparedCall, result: ToolResult) -> None:
        """The result of a call the run stopped waiting for (``RunLoop.take_over``)."""
        self._report(prepared, result)

    def _report(self, prepared: PreparedCall, result: ToolResult) -> None:
        """Report the result of a prepared call; an executed one is the loop guard's record."""
        if result.not_run == "deferred" and prepared not in self.deferrals.own:
            result = self._defer(prepared)  # it asked a question nobody can answer now
            self._say_held()
        call, error = prepared.call, result.error
        if call.id in self.deferrals.below:
            return  # no result: its sub-agent waits for a decision
        if error is not None and error.startswith(GAVE_UP):
            self.warn(WarningKind.TOOL_TIMEOUT, f"{call.name}: {error}", call_id=call.id)
        if not result.executed:
            self._report_call(call, result)
            return
        content = result.to_content()
        tool = prepared.tool
        self.guard.record(
            prepared.key,
            content,
            side_effects=tool is None or not tool.read_only,
            call=(call.name, prepared.arguments),
        )
        self.record(Message(role="tool", content=content, tool_call_id=call.id, name=call.name))
        if self.observed:
            self.emit(ToolResultEvent(result=result.to_dict(), content=content))
        self._open.pop(call.id, None)

    def _report_call(self, call: ToolCall, result: ToolResult) -> None:
        """Report the result of a call that did not run (the loop guard keeps no record)."""
        if self.deferrals.waits and self.deferrals.holds(call.id):
            return  # no result: it waits for a decision
        content = result.to_content()
        self.record(Message(role="tool", content=content, tool_call_id=call.id, name=call.name))
        if self.observed:
            self.emit(ToolResultEvent(result=result.to_dict(), content=content))
        self._open.pop(call.id, None)


_RAN = Outcome()  # the common outcome, made once


def _refused(call: ToolCall, message: str, not_run: NotRun) -> ToolResult:
    return ToolResult.refused(call.id, call.name, message, not_run)
