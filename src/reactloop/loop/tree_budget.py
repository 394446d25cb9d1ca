"""One budget for a tree of agents: a child's spending counts against every ancestor's limits.

An agent used as another's tool (``Agent.as_tool``, ``reactloop.subagents``) runs a child
``RunLoop`` whose ``RunSettings.tree`` is its ``TreePlace``: where it is in the tree, and the
budget of the run that called it. Its ``TreeBudget`` then:

- starts from ``capped(child limits, parent budget)``: its own ``Limits``, never more than what
  the parent has left (model calls, tool calls, tokens, dollars, seconds);
- keeps, in each ancestor that winds down, one model call for the last word of each run
  between it and the child (the parent answers after its children, not out of calls; with
  parallel children, a sibling may still find none left);
- counts each model call and tool call, its tokens and cost, in itself and in every ancestor,
  so the root's limits bound the sum over the tree, and a parent whose children spent its
  budget winds down and stops as it does at its own limits;
- takes model calls and tool calls under the tree's one lock, checking every ancestor: a
  model call is reserved in the ancestors when the check lets it go, and a tool call is
  counted when it is admitted, so parallel siblings cannot together go past a count limit.
  Tokens and dollars are known only when a call returns: like a single run, which can go past
  ``max_tokens`` by its last call, a tree can go past it by the calls in flight when it is
  reached (at most one per agent running at that moment).

The root's own ``Budget`` is a plain one: the root's loop is blocked in its tool calls while
its children run, so only the children's threads write it, under the tree's lock.

``current_run()``: the run whose tool is called (a context variable set by ``RunLoop.drive``,
which the tool threads inherit), so an agent tool finds its parent.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, TypeVar

from reactloop.journal.run_counts import Pricer, spend_model_call
from reactloop.limits import Limits, StopReason
from reactloop.loop.budget import Budget
from reactloop.messages import Usage

if TYPE_CHECKING:
    from reactloop.journal.emitter import Emitter
    from reactloop.journal.run_counts import RunCounts
    from reactloop.loop.settings import RunSettings
    from reactloop.loop.tool_calls import CallRunner

_NO_USAGE = Usage()
_N = TypeVar("_N", int, float)


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class TreePlace:
    """Where a run is in its tree: ``path`` (``""`` for the root, ``"/researcher#1"`` for the
    first call of the ``researcher`` tool), ``depth`` (0 for the root), the ``parent`` budget
    its spending also counts in (None for the root), the tree's locks: ``lock`` (budgets,
    journals), ``asking`` (the root's approver: one question at a time, reentrant)."""

    path: str = ""
    depth: int = 0
    parent: Budget | None = None
    lock: threading.RLock = dataclasses.field(default_factory=threading.RLock)
    asking: threading.RLock = dataclasses.field(default_factory=threading.RLock)
    children: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))
    counted: int | None = None  # a resumed child in its parent's state: its tool calls there

    def child(
        self, name: str, parent: Budget, *, path: str | None = None, counted: int | None = None
    ) -> TreePlace:
        """The next child's place, through ``name``; a resumed one keeps its path (and number)."""
        if path is None:
            with self.lock:
                path = f"{self.path}/{name}#{next(self.children)}"
        return TreePlace(
            path=path,
            depth=self.depth + 1,
            parent=parent,
            lock=self.lock,
            asking=self.asking,
            counted=counted,
        )


class RunView(Protocol):
    """What an agent tool reads of the run that called it (a ``RunLoop``)."""

    settings: RunSettings
    budget: Budget
    events: Emitter
    calls: CallRunner  # a child's calls that wait for a decision wait in its parent's call too
    place: TreePlace
    done: bool  # the run has ended: nothing more goes in its journal


_CURRENT: ContextVar[RunView | None] = ContextVar("reactloop_current_run", default=None)


def current_run() -> RunView | None:
    """The run whose tool call this thread serves, or None outside a run."""
    return _CURRENT.get()


@contextmanager
def running(run: RunView) -> Iterator[None]:
    token = _CURRENT.set(run)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def budget_for(
    place: TreePlace, limits: Limits, price: Pricer | None, counts: RunCounts | None
) -> Budget:
    """A root's plain ``Budget``, or a child's ``TreeBudget`` (``counts``: a resumed run's)."""
    if place.parent is None:
        return Budget(limits, price, counts)
    parent, lock, counted = place.parent, place.lock, place.counted
    return TreeBudget(limits, price, counts, parent=parent, lock=lock, counted=counted)


def capped(limits: Limits, parent: Budget) -> Limits:
    """``limits``, each no more than what ``parent`` has left (at least one call of each)."""
    tokens = parent.limits.max_tokens
    tokens_left = None if tokens is None else max(1, tokens - parent.usage.total_tokens)
    cost = parent.limits.max_cost
    cost_left = None if cost is None else max(0.0, cost - (parent.cost or 0.0))
    seconds_left = parent.seconds_left
    return dataclasses.replace(
        limits,
        max_model_calls=max(1, min(limits.max_model_calls, parent.model_calls_left - 1)),
        max_tool_calls=max(1, min(limits.max_tool_calls, parent.tool_calls_left)),
        max_seconds=_least(
            limits.max_seconds, None if seconds_left is None else max(0.0, seconds_left)
        ),
        max_tokens=tokens_left
        if limits.max_tokens is None
        else _least(limits.max_tokens, tokens_left),
        max_cost=_least(limits.max_cost, cost_left),
    )


def _least(own: _N | None, left: _N | None) -> _N | None:
    if own is None:
        return left
    return own if left is None else min(own, left)


class TreeBudget(Budget):
    """A child's budget: its own limits and every ancestor's, which count its spending too."""

    def __init__(
        self,
        limits: Limits,
        price: Pricer | None,
        counts: RunCounts | None = None,
        *,
        parent: Budget,
        lock: threading.RLock,
        counted: int | None = None,
    ) -> None:
        self.parent = parent
        self.lock = lock
        self.counted = counted  # its spending before a resume, in its ancestors: tool calls
        self.reserved = False  # a model call of this run reserved in the ancestors
        super().__init__(limits, price, counts)
        if counts is not None:  # resumed: its spending so far, in its ancestors as it was live
            with lock:  # but what they have from its ``child_stop`` (``counted``)
                parent.tool_calls += counts.tool_calls - (counted or 0)
                if counted is None:
                    count_spent(parent, counts.model_calls, 0, counts.usage, counts.cost)

    @property
    def tool_calls(self) -> int:
        return self.counts.tool_calls

    @tool_calls.setter
    def tool_calls(self, value: int) -> None:
        with self.lock:
            counts = self.counts
            delta, counts.tool_calls = value - counts.tool_calls, value
            self.parent.tool_calls += delta

    def ancestors(self) -> Iterator[Budget]:
        budget: Budget | None = self.parent
        while budget is not None:
            yield budget
            budget = budget.parent if isinstance(budget, TreeBudget) else None

    @property
    def model_calls_left(self) -> int:
        own = self.reserved  # this run's reservation is counted in the ancestors
        return min(
            self.limits.max_model_calls - self.counts.model_calls,
            *(_calls_left(b) - _kept(b, n) + own for n, b in enumerate(self.ancestors(), 1)),
        )

    @property
    def tool_calls_left(self) -> int:
        return min(
            self.limits.max_tool_calls - self.tool_calls,
            *(b.limits.max_tool_calls - b.tool_calls for b in self.ancestors()),
        )

    def take_tool_call(self) -> bool:
        with self.lock:
            if self.tool_calls_left <= 0:
                return False
            self.tool_calls += 1
            return True

    def stop_before_model_call(self) -> StopReason | None:
        """Own limits, then each ancestor's; a call that may go is reserved in the ancestors."""
        with self.lock:
            self.release()
            reason = super().stop_before_model_call()
            for distance, budget in enumerate(self.ancestors(), 1):
                if reason is None:
                    reason = _limit_reached(budget, _kept(budget, distance))
            if reason is None:
                self.reserved = True
                for budget in self.ancestors():
                    budget.reserved_calls += 1
            return reason

    def release(self) -> None:
        """Give back a reserved model call that was not made (the run ended, or only asked)."""
        with self.lock:
            if self.reserved:
                self.reserved = False
                for budget in self.ancestors():
                    budget.reserved_calls -= 1

    def record_model_call(self, usage: Usage) -> None:
        with self.lock:
            self.release()
            cost = 0.0 if self.price is None else self.price.cost(usage)
            spend_model_call(self.counts, usage, cost)
            for budget in self.ancestors():
                _absorb(budget, usage, cost)

    def record_model_call_failed(self) -> None:
        with self.lock:
            self.release()
            super().record_model_call_failed()
            for budget in self.ancestors():
                _absorb(budget, _NO_USAGE, 0.0)


def _calls_left(budget: Budget) -> int:
    return budget.limits.max_model_calls - budget.model_calls - budget.reserved_calls


def _kept(budget: Budget, distance: int) -> int:
    """The model calls an ancestor keeps for the last words of the runs between it and the
    child (``distance`` levels up: itself and those below it), when it winds down."""
    return distance if budget.limits.wind_down else 0


def _limit_reached(budget: Budget, kept: int) -> StopReason | None:
    """Why ``budget`` (an ancestor) lets no more model calls go, its reservations and the
    calls it keeps counted."""
    limits = budget.limits
    if budget.timed_out():
        return StopReason.TIMEOUT
    if _calls_left(budget) <= kept:
        return StopReason.MAX_MODEL_CALLS
    if limits.max_tokens is not None and budget.usage.total_tokens >= limits.max_tokens:
        return StopReason.MAX_TOKENS
    if limits.max_cost is not None and (budget.cost or 0.0) >= limits.max_cost:
        return StopReason.MAX_COST
    return None


def count_spent(
    budget: Budget, model_calls: int, tool_calls: int, usage: Usage, cost: float
) -> None:
    """What a descendant spent where its own budget cannot count it (a child resumed, or one
    whose recorded outcome stands), counted in ``budget`` and each of its ancestors."""
    budget.tool_calls += tool_calls  # a tree budget passes its tool calls up itself
    target: Budget | None = budget
    while target is not None:
        target.model_calls += model_calls
        target.usage = target.usage + usage
        target.counts.cost += cost
        target = target.parent if isinstance(target, TreeBudget) else None


def _absorb(budget: Budget, usage: Usage, cost: float) -> None:
    """A descendant's model call, counted in an ancestor (its ``last_usage`` stays its own)."""
    budget.model_calls += 1
    if usage != _NO_USAGE:
        budget.usage = budget.usage + usage
    budget.counts.cost += cost
