"""One run of the loop: ask the model, check its calls, run them, append the results, repeat.

``RunLoop`` holds what belongs to a single run — history, budget, loop guard, counters (its
``RunCounts``, the value a journal's fold computes, kept by the budget) — and ``execute`` is
the loop itself (a resumed run: this loop, started from a journal's folded ``RunState``);
what it does with a turn is ``turn_reactions.py``'s. It reads its ``RunSettings``, never the
``Agent``. Every decision is emitted as an event, so the journal shows why; a journal that
cannot take an event ends the run with ``journal_error`` (a run is never journaled with
holes, silently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reactloop.history import History
from reactloop.journal.emitter import Emitter
from reactloop.journal.events import micros
from reactloop.journal.run_counts import count_budget_notice, count_request, count_turn
from reactloop.journal.run_state import RunState
from reactloop.journal.schema import BudgetNoticeEvent, RequestEvent, TurnEvent
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import StopReason
from reactloop.loop.guard_legacy import judged_again
from reactloop.loop.model_call import ModelFailure, ask
from reactloop.loop.notices import wind_down_notice
from reactloop.loop.run_parts import (
    final_stop,
    model_at,
    opening,
    run_parts,
    run_result,
    run_start_event,
    stop_event,
    with_own_toolbox,
)
from reactloop.loop.runtime.custody import run_in_custody
from reactloop.loop.settings import RunSettings
from reactloop.loop.tree_budget import TreePlace, budget_for, running
from reactloop.loop.turn_reactions import react
from reactloop.messages import Message, ModelTurn
from reactloop.result import RunResult, Stop
from reactloop.tools.prepared import PreparedCall
from reactloop.tools.questions import Questions, asking


class RunLoop:
    """The state of one run. ``execute`` is the loop."""

    def __init__(
        self,
        settings: RunSettings,
        task: str,
        history: Sequence[Message] = (),
        continues: str | None = None,
        *,
        state: RunState | None = None,
    ) -> None:
        """``history``: the messages of the runs this one continues (``continues`` names
        their journal, when they had one): the task is appended to them as a follow-up.
        ``state``: a resumed run's, folded from its journal: the run goes on from it."""
        settings = with_own_toolbox(settings)
        self.settings = settings
        self.task = task
        self.place = settings.tree if settings.tree is not None else TreePlace()
        counts = None if state is None else state.counts
        self.budget = budget_for(self.place, settings.limits, settings.price, counts)
        self.counts = self.budget.counts  # the run's counters: the budget's, the fold's
        self.history = History(opening(history, settings.instructions))
        self.prior = len(history)
        self.continues = continues
        self.model_seconds = 0.0
        self.events = Emitter(settings.journal, settings.observers)
        self.emit, self.warn = self.events.emit, self.events.warn
        self.observed = self.events.observed
        if self.observed:  # a tool search journals its searches
            settings.toolbox.bind_events(self.emit)
        parts = run_parts(settings, self.budget, self.history, self.events, history)
        self.calls, self.answers, self.checks = parts.calls, parts.answers, parts.checks
        self.context, self.budget_notes = parts.context, parts.budget_notes
        self.given: dict[str, Mapping[str, Any]] = {}  # a person's answers to calls' questions
        self.done = False  # its ``stop`` is written: a child given up on writes no more here
        if state is not None:
            self._go_on_from(state)

    def _go_on_from(self, state: RunState) -> None:
        """What a resumed run keeps outside its counters: the loop guard's memory of the
        calls (the fold's), the tools found and skills activated, the model's place."""
        self.events.step = self.counts.step
        if state.guard.old:  # a journal that does not say what the guard judged
            judged_again(self.calls.guard, self.settings.toolbox.prepare, state)
        else:
            self.calls.guard.state = state.guard.state
        toolbox = self.settings.toolbox
        if toolbox.search is not None:  # the tools the run's searches revealed
            toolbox.search.reveal(state.revealed)
        if toolbox.skills is not None:  # a skill activated is not sent again
            toolbox.skills.restore(state.activated)
        model_at(self.settings.model, self.counts.turns)

    @property
    def journal_error(self) -> str | None:
        return self.events.journal_error

    @property
    def warnings(self) -> list[str]:
        return self.events.warnings

    def execute(self) -> RunResult:
        """The run; under a time limit on a thread of its own, which the calling thread gives
        up on at the limit if a tool holds it (``loop/runtime/custody.py``)."""
        deadline = self.budget.deadline
        if deadline is None:
            return self.drive()
        return run_in_custody(self, deadline, self.settings.cancel)

    def drive(self) -> RunResult:
        questions = Questions(self.emit, self.given)  # what a call asks goes in the journal
        with running(self), asking(questions):  # the run an agent tool of this run is a child of
            try:
                self.start()
                stop = None
                while stop is None:
                    stop = self.step_once()
            except KeyboardInterrupt:
                stop = Stop(StopReason.CANCELLED, None, "interrupted")
            finally:  # a sub-agent's reserved model call not made (a fresh run or a resumed one)
                self.budget.release()
            return self.finish(stop)

    def start(self) -> None:
        self.history.append(Message(role="user", content=self.task, kind="task"))
        if self.observed:
            self.emit(run_start_event(self.settings, self.task, self.prior, self.continues))

    def step_once(self) -> Stop | None:
        """One step; returns how the run ends when it must end."""
        budget = self.budget
        if self.events.journal_error is not None:
            return Stop(StopReason.JOURNAL_ERROR, None, self.events.journal_error)
        if self.settings.cancel.is_set():
            return Stop(StopReason.CANCELLED, None, "cancelled")
        reason = budget.stop_before_model_call()
        if reason is not None:
            return Stop(reason, None, f"limit reached: {reason}")
        notes = self.budget_notes
        if notes is not None and (line := notes.line()) is not None:
            self.note_budget(line)
        if self.context.limited or self.counts.last_usage.input_tokens:  # else nothing to keep
            full = self.keep_context()
            if full is not None:
                return full
        self.counts.step += 1
        self.events.step = self.counts.step
        turn = self.ask_model()
        if isinstance(turn, ModelFailure):
            if budget.timed_out():  # the call failed because the run's time did
                return Stop(StopReason.TIMEOUT, None, turn.message)
            return Stop(StopReason.MODEL_ERROR, None, turn.message, error_kind=turn.kind)
        return self.handle_turn(turn)

    def accept(self, stop: Stop) -> Stop | None:
        """A final answer, once it passes the run's completion checks (``completion_checks.py``);
        None: it did not, the model was told why, and the run goes on."""
        if self.checks is None:
            return stop
        can_go_on = self.budget.stop_before_model_call() is None
        return self.checks.review(stop, can_go_on=can_go_on)

    def note_budget(self, line: str) -> None:
        """Before a model call: the budget notice that is due (``BudgetNotices.line``)."""
        self.history.append(Message(role="user", content=line, kind="notice"))
        count_budget_notice(self.counts)
        if self.observed:
            self.emit(BudgetNoticeEvent(line=line))

    def keep_context(self) -> Stop | None:
        """Before a model call: the context kept within its limit (``compaction.py``)."""
        checked = self.context.check(self.counts.step, self.counts.sent)
        if checked is None:
            return None
        self.counts.sent = checked.sent
        return None if checked.stop is None else Stop(StopReason.MAX_TOKENS, None, checked.stop)

    def ask_model(self, answer_now: bool = False) -> ModelTurn | ModelFailure:
        """The next model call; ``answer_now``: it is told to answer now, without tools (the
        model's last word), as it is when the budget winds down."""
        budget, history, counts = self.budget, self.history, self.counts
        wind_down = answer_now or budget.wind_down_due()
        if wind_down and not counts.wound_down:
            counts.wound_down = True
            notice = wind_down_notice(tools_exhausted=budget.tool_calls_left <= 0)
            history.append(Message(role="user", content=notice, kind="wind_down"))
            self.warn(WarningKind.WIND_DOWN, notice)
        if history.rewritten_at is not None:  # the prompt's prefix changed (rare)
            changed = history.take_prefix_change()
            self.warn(WarningKind.PREFIX_CHANGED, f"message {changed} was rewritten", index=changed)
        tool_choice = "none" if wind_down else self.settings.tool_choice
        emit, sent = None, counts.sent
        count_request(counts, len(history), wind_down)
        if self.observed:
            emit = self.emit
            emit(
                RequestEvent(
                    n_messages=len(history),
                    messages_new=[m.to_dict() for m in history[sent:]],
                    tool_choice=tool_choice,
                    wind_down=wind_down,
                )
            )
        asked = ask(
            self.settings, history, tool_choice, budget, counts.step, emit, self.events.warn_once
        )
        self.model_seconds = asked.seconds
        return asked.turn

    def record_turn(self, turn: ModelTurn) -> ModelTurn:
        turn = self.calls.take_turn(turn, self.counts.step)
        self.history.append(
            Message(
                role="assistant",
                content=turn.text,
                tool_calls=turn.tool_calls,
                reasoning=turn.reasoning,
                raw=turn.raw_message,
            )
        )
        count_turn(self.counts, turn)
        if self.observed:
            self.emit(TurnEvent(turn=turn.to_dict(), seconds=micros(self.model_seconds)))
        search = self.settings.toolbox.search
        if turn.tool_searches and search is not None:  # the provider searched: it revealed
            search.found_by_provider(turn.tool_searches)
        return turn

    def handle_turn(self, turn: ModelTurn) -> Stop | None:
        return react(self, self.record_turn(turn))  # turn_reactions.py

    def take_over(self, calls: Sequence[PreparedCall], stop: Stop) -> RunResult:
        """On the waiting thread, the run's own being stuck in ``calls``, a model call or the
        approver: answer the calls as given up on, and stop (``loop/runtime/custody.py``)."""
        executor = self.calls.executor
        for prepared in calls:
            why = "cancelled" if stop.reason is StopReason.CANCELLED else "timeout"
            self.calls.report_given_up(prepared, executor.given_up(prepared, why))
        executor.leave_behind()
        return self.finish(stop)

    def finish(self, stop: Stop) -> RunResult:
        self.calls.close_open(str(stop.reason))  # calls the run ended before answering
        self.calls.executor.close()
        stop = final_stop(stop, self.journal_error)
        result = self._result(stop)
        with self.place.lock:  # a child of this run may be writing its ``child_stop``
            self.done = True
        if self.observed:
            self.emit(stop_event(stop, result))
        if self.journal_error is not None and stop.reason is not StopReason.JOURNAL_ERROR:
            result = self._result(final_stop(stop, self.journal_error))  # the stop event was lost
        return result

    def _result(self, stop: Stop) -> RunResult:
        return run_result(self.settings, self.budget, self.history, self.warnings, stop)
