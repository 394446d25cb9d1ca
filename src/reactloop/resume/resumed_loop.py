"""``ResumedLoop``: a ``RunLoop`` that starts from a journal's folded state instead of a task.

The loop is handed that state (``RunLoop(..., state=)``: its counters are the fold's
``RunCounts``, and the budget, the flags, the answer gate and the checks count on in them); the
resumed loop writes the ``resume`` event, settles the calls of the last turn, then goes on
as any run does, to one ``stop``.

The calls of the last turn, in the model's order: one with a recorded result is never run
again; one not started runs as it would have (the approver asked, or the decision given
used); an *uncertain* one (started, no result) runs again only when its tool is read-only
or ``idempotent``, or when a decision or the approver allows it (asked with a note that it
may already have run); without an approver the model is told so, as the call's result.
"""

from __future__ import annotations

from collections.abc import Mapping

from reactloop.approval import DecidingApprover, Decision
from reactloop.journal.resume_point import ResumeState
from reactloop.journal.run_state import OpenCall
from reactloop.journal.schema import ResumeEvent
from reactloop.limits import StopReason
from reactloop.loop.run_loop import RunLoop
from reactloop.loop.settings import RunSettings
from reactloop.loop.turn_reactions import after_last_word, last_word, on_tool_calls, react
from reactloop.messages import Message, ToolCall, ToolResult
from reactloop.result import Stop


class ResumedLoop(RunLoop):
    def __init__(
        self,
        settings: RunSettings,
        state: ResumeState,
        record: ResumeEvent,
        *,
        decisions: Mapping[str, Decision],
        notes: Mapping[str, str],
    ) -> None:
        """``record``: the ``resume`` event; ``decisions``: by call id; ``notes``: the
        note for each uncertain call (when it started)."""
        super().__init__(settings, state.task, state.messages, state=state)
        self.resumed = state
        self.record = record
        self.decisions = dict(decisions)
        self.notes = dict(notes)
        self.calls.approve = DecidingApprover(settings.approve, self.decisions, self.notes)
        self.given.update((i, d) for i, d in self.decisions.items() if isinstance(d, Mapping))
        self.settled: Stop | None = None

    def start(self) -> None:
        """``RunLoop.execute`` calls it first (so a resumed run ends as any run does, Ctrl-C
        included): the ``resume`` event, then the last turn's calls settled."""
        if not self.resumed.messages:  # killed before its first request: the task is not there
            self.history.append(Message(role="user", content=self.task, kind="task"))
        self.emit(self.record)
        self.settled = self.settle()

    def step_once(self) -> Stop | None:
        if self.settled is not None:  # settling the calls ended the run
            return self.settled
        return super().step_once()

    def settle(self) -> Stop | None:
        """The last turn's calls that have no result, each settled in the model's order."""
        state = self.resumed
        if state.loop is not None:  # the guard had stopped the run: only its last word is left
            return self._after_loop(state.loop)
        turn = state.last_turn
        if turn is not None and not state.turn_handled:  # killed before the loop read it
            self.calls.open_turn(turn.tool_calls)
            return react(self, turn)
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
            self.budget.take_tool_call()  # it started: it counts, as it did in the run
            self.calls.report(open_call.call, answer)
        return self._run(batch)

    def _after_loop(self, loop: str) -> Stop:
        """The calls after the one the guard stopped on refused as the run refused them, then
        the model's last word (or the one it had given) and the ``loop_detected`` stop."""
        for open_call in self.resumed.calls:
            if open_call.state != "done":
                call = open_call.call
                error = f"not run: the run stopped ({loop})"
                result = ToolResult.refused(call.id, call.name, error, "run_stopped")
                self.calls.open_turn([call])
                self.calls.answer(call, result)
        turn = self.resumed.last_word
        if turn is None:
            return last_word(self, StopReason.LOOP_DETECTED, loop)
        return after_last_word(self, StopReason.LOOP_DETECTED, loop, turn)

    def _run(self, batch: list[ToolCall]) -> Stop | None:
        return on_tool_calls(self, tuple(batch)) if batch else None

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
