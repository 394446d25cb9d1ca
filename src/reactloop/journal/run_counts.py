"""``RunCounts``: a run's counters, one mutable value owned by the run. The live loop's parts
keep theirs in it (the budget its spending, its cost and its time before a resume, the loop
its step and flags, the answer gate and the checks theirs), and the fold (``fold.py``)
computes the same value from a journal's events: a resumed loop is handed the fold's
``RunCounts`` and goes on counting in it.

The small functions below are the moves both make, each in one place: the loop when the thing
happens, the fold when it reads the event that records it (a ``request``, a ``turn``, a
``budget_notice``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from reactloop.messages import ModelTurn, Usage

_NO_USAGE = Usage()


class Pricer(Protocol):
    """A model's price: the dollars a call's usage costs."""

    def cost(self, usage: Usage) -> float: ...


@dataclass(slots=True, kw_only=True)
class RunCounts:
    step: int = 0
    sent: int = 0  # messages the model has seen (the last request's ``n_messages``)
    turns: int = 0  # model turns the model produced (where a stateful model resumes)
    model_calls: int = 0  # a sub-agent's included (live as they come; folded at its stop)
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    last_usage: Usage = field(default_factory=Usage)  # of the latest model call
    cost: float = 0.0  # dollars, at the run's price (none counted without one)
    seconds_before: float = 0.0  # the run's time when it was last resumed: its clock goes on
    format_errors: int = 0  # unusable replies in a row
    truncations: int = 0  # replies cut off at the output limit, retried
    wound_down: bool = False  # the model was told to answer now
    forced: bool = False  # the latest model call was told to answer now, without tools
    invalid_answers: int = 0  # a typed run's invalid answers in a row
    invalid_before_turn: int = 0  # the same before the last turn (a turn judged again)
    checklist_shown: bool = False  # the checklist was shown to the model
    # the spending when each budget notice was given (model calls, tool calls, tokens)
    notices_at: list[tuple[int, int, int]] = field(default_factory=list)


def count_request(counts: RunCounts, n_messages: int, wind_down: bool) -> None:
    """A model call asked for: the messages it sends, and whether it is told to answer now."""
    counts.sent = n_messages
    counts.forced = wind_down


def spend_model_call(counts: RunCounts, usage: Usage, cost: float = 0.0) -> None:
    """A model call made, what it used and what that cost (0.0 without a price)."""
    counts.model_calls += 1
    counts.last_usage = usage
    counts.cost += cost
    if usage != _NO_USAGE:
        counts.usage = counts.usage + usage


def count_turn(counts: RunCounts, turn: ModelTurn) -> None:
    """A turn in the history: its count, a run of unusable replies it ends, and the typed
    answers' count, kept as it was before the turn (the turn's own verdict is after it)."""
    counts.turns += 1
    if counts.format_errors and clears_format_errors(turn):
        counts.format_errors = 0
    counts.invalid_before_turn, counts.invalid_answers = counts.invalid_answers, 0


def count_invalid_answer(counts: RunCounts) -> int:
    """The last turn's answer was invalid: the invalid answers in a row, it included."""
    counts.invalid_answers = counts.invalid_before_turn + 1
    return counts.invalid_answers


def count_budget_notice(counts: RunCounts) -> None:
    counts.notices_at.append((counts.model_calls, counts.tool_calls, counts.usage.total_tokens))


def clears_format_errors(turn: ModelTurn) -> bool:
    """A turn that ends a run of unusable replies: readable, with calls or an answer."""
    if turn.format_error is not None or turn.finish_reason in ("length", "content_filter"):
        return False
    return bool(turn.tool_calls) or turn.answer is not None
