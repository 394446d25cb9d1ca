"""``ResumedLoop``: a ``RunLoop`` that starts from a rebuilt state instead of a task.

It carries the counts over (model and tool calls, tokens, the run's time, the step, the
messages the model has seen, the budget notices given), puts a stateful model back at the
turn it had reached, writes the ``resume`` event, settles the calls of the last turn, then
goes on as any run does, to one ``stop``.

The calls of the last turn, in the model's order: one with a recorded result is never run
again; one not started runs as it would have (the approver asked, or the decision given
used); an *uncertain* one (started, no result) runs again only when its tool is read-only
or ``idempotent``, or when a decision or the approver allows it (asked with a note that it
may already have run); without an approver the model is told so, as the call's result.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Mapping
from typing import Any

from reactloop.limits import StopReason
from reactloop.loop.loop_guard import effects_of
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.run_parts import refused
from reactloop.loop.settings import RunSettings
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult
from reactloop.result import Stop
from reactloop.resume.run_state import OpenCall, ResumeState
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Approver, Defer, PreparedCall

Decision = bool | str  # True: run it; a reason: denied


class ResumedLoop(RunLoop):
    def __init__(
        self,
        settings: RunSettings,
        state: ResumeState,
        record: Mapping[str, Any],
        *,
        decisions: Mapping[str, Decision],
        notes: Mapping[str, str],
    ) -> None:
        """``record``: the ``resume`` event's data; ``decisions``: by call id; ``notes``: the
        note for each uncertain call (when it started)."""
        super().__init__(settings, state.task, state.messages)
        self.state = state
        self.record = dict(record)
        self.decisions = dict(decisions)
        self.notes = dict(notes)
        self.calls.approve = DecidingApprover(settings.approve, self.decisions, self.notes)
        self.settled: Stop | None = None
        _restore(self, state)

    def start(self) -> None:
        """``RunLoop.execute`` calls it first (so a resumed run ends as any run does, Ctrl-C
        included): the ``resume`` event, then the last turn's calls settled."""
        if not self.state.messages:  # killed before its first request: the task is not there
            self.history.append(Message(role="user", content=self.task, kind="task"))
        self.emit("resume", **self.record)
        self.settled = self.settle()

    def step_once(self) -> Stop | None:
        if self.settled is not None:  # settling the calls ended the run
            return self.settled
        return super().step_once()

    def settle(self) -> Stop | None:
        """The last turn's calls that have no result, each settled in the model's order."""
        state = self.state
        if state.loop is not None:  # the guard had stopped the run: only its last word is left
            return self._after_loop(state.loop)
        turn = state.last_turn
        if turn is not None and not state.turn_handled:  # killed before the loop read it
            if turn.finish_reason == "content_filter":
                return Stop(StopReason.CONTENT_FILTER, None, refused(turn))
            if turn.finish_reason == "length":  # its calls are refused, as the run would have
                return self.on_truncated(turn)
            typed = self._typed_answer(turn) if self.answers is not None else None
            if typed is not None:  # an answer of the output type: judged as the run would
                return typed[0]
            if turn.format_error is not None or (not turn.tool_calls and turn.answer is None):
                return self.on_format_error(turn)
        open_calls = [c for c in state.calls if c.state != "done"]
        if not open_calls:
            turn = state.final_turn
            # it answered; the stop was lost, or a Ctrl-C came while its checks ran
            if turn is not None and state.why in ("no_stop", "cancelled"):
                return self.accept(Stop(StopReason.FINAL_ANSWER, turn.answer))
            return None
        self.calls.open_turn([c.call for c in open_calls])
        batch: list[ToolCall] = []
        for open_call in open_calls:
            answer = self._answer_without_running(open_call)
            if answer is None:
                batch.append(open_call.call)
                continue
            stop = self._run(batch)
            if stop is not None:
                return stop
            batch = []
            self.budget.tool_calls += 1  # it started: it counts, as it did in the run
            self.calls.report(open_call.call, answer)
        return self._run(batch)

    def _typed_answer(self, turn: ModelTurn) -> tuple[Stop | None] | None:
        """``handle_turn``'s reading of a typed answer (text, or the ``final_answer`` call),
        for the last turn the loop never read; None when the turn is no answer."""
        assert self.answers is not None
        self.calls.open_turn(turn.tool_calls)
        judged = self.answers.judge(turn)
        if judged is None:
            return None
        if judged.others:  # final_answer beside other calls: those run, it is refused
            return (self.on_tool_calls(judged.others),)
        stop = self.answers.settle(judged, self.flags.forced)
        valid = stop is not None and stop.reason is StopReason.FINAL_ANSWER
        return (self.accept(stop) if stop is not None and valid else stop,)

    def _after_loop(self, loop: str) -> Stop:
        """The calls after the one the guard stopped on refused as the run refused them, then
        the model's last word (or the one it had given) and the ``loop_detected`` stop."""
        for open_call in self.state.calls:
            if open_call.state != "done":
                call = open_call.call
                error = f"not run: the run stopped ({loop})"
                result = ToolResult.refused(call.id, call.name, error, "run_stopped")
                self.calls.open_turn([call])
                self.calls.answer(call, result)
        turn = self.state.last_word
        if turn is None:
            return self.last_word(StopReason.LOOP_DETECTED, loop)
        return self.after_last_word(StopReason.LOOP_DETECTED, loop, turn)

    def _run(self, batch: list[ToolCall]) -> Stop | None:
        return self.on_tool_calls(tuple(batch)) if batch else None

    def _answer_without_running(self, open_call: OpenCall) -> ToolResult | None:
        """The result an uncertain call gets without running; None: it goes to be run."""
        call = open_call.call
        if open_call.state != "uncertain" or call.id in self.decisions:
            return None
        tool = self.settings.toolbox.get(call.name)
        if tool is not None and (tool.read_only or tool.idempotent):
            return None
        if self.settings.approve is not None:
            return None  # asked, with the note
        note = self.notes.get(call.id, "this call may already have run")
        error = f"not run again: {note}; check whether it did before calling it again"
        return ToolResult.refused(call.id, call.name, error, "uncertain")


class DecidingApprover:
    """The resumed run's approver: the decisions given first (True runs, a reason denies),
    then the agent's approver (told, for an uncertain call, that it may already have run);
    without one, a call nobody decided runs, as in any run without an approver."""

    def __init__(
        self,
        approve: Approver | None,
        decisions: Mapping[str, Decision],
        notes: Mapping[str, str],
    ) -> None:
        self.approve = approve
        self.decisions = decisions
        self.notes = notes
        self.takes_note = approve is not None and _takes_note(approve)

    def __call__(self, call: PreparedCall, tool: Tool) -> bool | str | Defer:
        decided = self.decisions.get(call.id)
        if decided is not None:
            return decided if decided is True or decided else "denied by the user"
        if self.approve is None:
            return True
        note = self.notes.get(call.id)
        if note is not None and self.takes_note:
            answer: bool | str | Defer = self.approve(call, tool, note=note)  # type: ignore[call-arg]
            return answer
        return self.approve(call, tool)


def _takes_note(approve: Approver) -> bool:
    try:
        parameters = inspect.signature(approve).parameters
    except (TypeError, ValueError):
        return False
    return "note" in parameters


def _restore(loop: ResumedLoop, state: ResumeState) -> None:
    """The counts of the recorded run, carried over."""
    budget = loop.budget
    budget.model_calls = state.model_calls
    budget.tool_calls = state.tool_calls
    budget.usage = state.usage
    budget.last_usage = state.last_usage
    budget.started = time.monotonic() - state.seconds
    if budget.price is not None:
        budget.cost = budget.price.cost(state.usage)
    loop.step = loop.events.step = state.step
    loop.sent = state.sent
    loop.flags.wound_down = state.wound_down
    loop.flags.format_errors = state.format_errors
    if loop.answers is not None:  # a last turn not handled yet is judged again: count before it
        handled = state.turn_handled
        loop.answers.invalid = state.invalid_answers if handled else state.invalid_before_turn
    loop.flags.truncations = state.truncations
    if loop.settings.toolbox.search is not None:  # the tools the run's searches revealed
        loop.settings.toolbox.search.reveal(state.revealed)
    if loop.settings.toolbox.skills is not None:  # a skill activated is not sent again
        loop.settings.toolbox.skills.restore(state.activated)
    if loop.checks is not None and state.checklist_shown:  # shown once, in the whole run
        loop.checks.shown = True
    notes = loop.budget_notes
    if notes is not None:
        for model_calls, tool_calls, tokens in state.notices_at:
            _mark_announced(notes, model_calls, tool_calls, tokens)
    _model_at(loop.settings.model, state.turns)
    _guard_at(loop, state)


def _guard_at(loop: ResumedLoop, state: ResumeState) -> None:
    """The loop guard as the calls so far left it: each call it had judged, judged again in
    order, and each executed one recorded with its result (repeats across a resume count)."""
    calls = loop.calls
    results = {m.tool_call_id: m.content for m in state.messages if m.role == "tool"}
    for message in state.messages:
        calls.guard.start_turn()
        for call in message.tool_calls:
            content = results.get(call.id)
            if content is None or state.not_run.get(call.id) in _UNJUDGED:
                continue
            prepared = calls.toolbox.prepare(call)
            effects = effects_of(prepared.tool)
            calls.guard.check(call, prepared.arguments, key=prepared.key, effects=effects)
            if call.id in state.executed:
                tool = prepared.tool
                calls.guard.record(
                    prepared.key,
                    content,
                    side_effects=tool is None or not tool.read_only,
                    call=(call.name, prepared.arguments),
                )


# The results the loop guard never saw: refused by a budget before it, or never run.
_UNJUDGED: frozenset[str | None] = frozenset(
    ("stopped", "reply_cut_off", "reply_unreadable", "tool_call_limit", "time_limit")
)


def _mark_announced(notes: Any, model_calls: int, tool_calls: int, tokens: int) -> None:
    """The budgets a recorded ``budget_notice`` announced, not announced again."""
    spent = {"model calls": model_calls, "tool calls": tool_calls, "tokens": tokens}
    for name, used in spent.items():
        if used > notes._marks[name]:
            notes._marks[name] = math.inf
            notes.announced.add(name)


def _model_at(model: Any, turns: int) -> None:
    """A model with state of its own (``ScriptedModel``) continues from the turn it had
    reached; a wrapping adapter (text ReAct) passes it on to the model it wraps."""
    seen = 0
    while model is not None and seen < 8:
        resume_at = getattr(model, "resume_at", None)
        if callable(resume_at):
            resume_at(turns)
            return
        model, seen = getattr(model, "inner", None), seen + 1
