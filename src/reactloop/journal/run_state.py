"""``RunState``: a run's state as its events leave it (``fold.py`` moves it on by an event; a
resume folds a journal's, ``resume_point.py``, and runs the loop from it).

What it holds: its counters (``counts``: a ``RunCounts``, the very value the live loop keeps
them in, so a resumed loop is handed this one and counts on); the history as the model saw it
(the ``request`` events' ``messages_new`` laid at their place, so a compaction that rewrote it
is followed), then the last turn and the results after it; the notices the harness put after
that (``notices``: a budget notice, a wind-down, the opening task), which a resumed loop makes
again; and the calls of the last turn, each done, uncertain (started, no result) or not
started. A stop that a later ``resume`` supersedes reopens the calls it closed
(``fold.reopen``). The loop guard's memory (``guard``: a ``GuardFold``, whose ``GuardState``
is the very value the live guard keeps it in) is handed to a resumed loop the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactloop.journal.guard_fold import GuardFold
from reactloop.journal.run_counts import Pricer, RunCounts
from reactloop.messages import Message, ModelTurn, NotRun, ToolCall, Usage


@dataclass(frozen=True, kw_only=True)
class OpenCall:
    """A call of the last turn: ``state`` is ``done`` (its result is recorded),
    ``uncertain`` (it started, no result: it may have run) or ``not_started``."""

    call: ToolCall
    state: str
    started_t: float | None = None


@dataclass(kw_only=True)
class RunState:
    messages: list[Message] = field(default_factory=list)
    notices: list[Message] = field(default_factory=list)  # placed after them, not yet sent
    notice: Message | None = None  # a format or truncation notice, placed after the results
    counts: RunCounts = field(default_factory=RunCounts)
    price: Pricer | None = None  # the price its calls cost (a journal records their usage)
    t0: float | None = None  # the ``t`` of the run's first event
    seconds: float = 0.0  # the run's time so far, in journal seconds
    calls: list[OpenCall] = field(default_factory=list)
    final_turn: ModelTurn | None = None  # a last turn that answered, without a stop
    last_turn: ModelTurn | None = None
    turn_handled: bool = True  # False: the last turn is journaled, nothing the loop did after
    # by call id: True, a reason (denied), or an answer to its question (``action``, ``content``)
    decisions: dict[str, bool | str | dict[str, Any]] = field(default_factory=dict)
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)  # awaiting, by call id
    started: set[str] = field(default_factory=set)  # ids of the calls with a tool_start
    executed: set[str] = field(default_factory=set)  # ids of the calls a tool ran (a result)
    not_run: dict[str, NotRun | None] = field(default_factory=dict)  # by call id: its result's
    warned: dict[str, str] = field(default_factory=dict)  # by call id: its last warning's message
    superseded: str | None = None  # the reason of a stop a later ``resume`` supersedes
    loop: str | None = None  # the loop guard stopped the run: why (its last word follows)
    last_word: ModelTurn | None = None  # the model's answer after that, the stop lost
    revealed: set[str] = field(default_factory=set)  # deferred tools a search revealed
    activated: set[str] = field(default_factory=set)  # skills the model activated
    children: dict[str, tuple[int, int, Usage, float]] = field(default_factory=dict)  # spent
    guard: GuardFold = field(default_factory=GuardFold)  # the loop guard's memory

    @property
    def step(self) -> int:
        return self.counts.step

    def count_child(
        self, call_id: str | None, model_calls: int, tool_calls: int, usage: Usage, cost: float
    ) -> None:
        """A sub-agent's spending from its ``child_stop``. A child that stopped again (resumed
        after it waited for a decision) counts what its last stop says, which includes what it
        had spent before: its earlier stop is taken back."""
        counts = self.counts
        before = self.children.get(call_id) if call_id else None
        if call_id:
            self.children[call_id] = (model_calls, tool_calls, usage, cost)
        if before is not None:
            taken = before[2].to_dict()
            spent = counts.usage.to_dict()
            counts.usage = Usage.from_dict({k: v - taken[k] for k, v in spent.items()})
            model_calls, tool_calls = model_calls - before[0], tool_calls - before[1]
            cost -= before[3]
        counts.model_calls += model_calls
        counts.tool_calls += tool_calls
        counts.usage = counts.usage + usage
        counts.cost += cost
