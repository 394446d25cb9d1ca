"""``RunState``: a run's state as its events leave it (``fold.py`` moves it on by an event;
a live run's events fold into it through ``fold.LiveState``, and a resume folds a journal's,
``resume/run_state.py``; each part of a resumed loop takes its own from it).

What it holds: the history as the model saw it (the ``request`` events' ``messages_new`` laid
at their place, so a compaction that rewrote it is followed), then the last turn and the
results after it; the notices the harness put after that (``notices``: a budget notice, a
wind-down, the opening task), which a resumed loop makes again; the counts; and the calls of
the last turn, each done, uncertain (started, no result) or not started. A stop that a later
``resume`` supersedes reopens the calls it closed (``fold.reopen``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    sent: int = 0  # messages the model has seen (the last request's ``n_messages``)
    step: int = 0
    turns: int = 0  # model turns the model produced (where a stateful model resumes)
    model_calls: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    last_usage: Usage = field(default_factory=Usage)
    t0: float | None = None  # the ``t`` of the run's first event
    seconds: float = 0.0  # the run's time so far, in journal seconds
    calls: list[OpenCall] = field(default_factory=list)
    final_turn: ModelTurn | None = None  # a last turn that answered, without a stop
    last_turn: ModelTurn | None = None
    turn_handled: bool = True  # False: the last turn is journaled, nothing the loop did after
    wound_down: bool = False
    format_errors: int = 0  # unusable replies in a row
    invalid_answers: int = 0  # a typed run's invalid answers in a row (its warnings' count)
    invalid_before_turn: int = 0  # the same before the last turn, for a turn judged again
    truncations: int = 0
    notices_at: list[tuple[int, int, int]] = field(default_factory=list)  # budget notices
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
    checklist_shown: bool = False  # the checklist was shown to the model (a ``check`` event)
    revealed: set[str] = field(default_factory=set)  # deferred tools a search revealed
    activated: set[str] = field(default_factory=set)  # skills the model activated
    children: dict[str, tuple[int, int, Usage]] = field(default_factory=dict)  # spent, by call

    def count_child(
        self, call_id: str | None, model_calls: int, tool_calls: int, usage: Usage
    ) -> None:
        """A sub-agent's spending from its ``child_stop``. A child that stopped again (resumed
        after it waited for a decision) counts what its last stop says, which includes what it
        had spent before: its earlier stop is taken back."""
        before = self.children.get(call_id) if call_id else None
        if call_id:
            self.children[call_id] = (model_calls, tool_calls, usage)
        if before is not None:
            taken = before[2].to_dict()
            self.usage = Usage.from_dict({k: v - taken[k] for k, v in self.usage.to_dict().items()})
            model_calls, tool_calls = model_calls - before[0], tool_calls - before[1]
        self.model_calls += model_calls
        self.tool_calls += tool_calls
        self.usage = self.usage + usage
