"""``Budget``: a run's spending counted against its ``Limits``, and the notices it sends when a
budget runs low. The counts themselves are the run's ``RunCounts`` (``journal/run_counts.py``),
the value a journal's fold computes: a resumed run's budget is handed the fold's (its spending,
its cost, its time so far), and goes on."""

from __future__ import annotations

import math
import time

from reactloop.journal.run_counts import Pricer, RunCounts, spend_model_call
from reactloop.limits import Limits, StopReason
from reactloop.loop import notices
from reactloop.messages import Usage


class Budget:
    """Counts a run's spending against its ``Limits``; ``cost`` is None without a price.

    A sub-agent's budget is a ``TreeBudget`` (``tree_budget.py``), which counts its spending
    in its ancestors' budgets too; ``reserved_calls`` are the model calls its descendants
    are making now."""

    reserved_calls = 0

    def __init__(
        self,
        limits: Limits,
        price: Pricer | None = None,
        counts: RunCounts | None = None,
    ) -> None:
        """``counts``: the run's (a resumed run's goes on from its spending and its time so
        far: its clock starts at ``seconds_before``)."""
        if limits.max_cost is not None and price is None:
            raise ValueError("max_cost needs the model's price")
        self.limits = limits
        self.price = price
        self.counts = counts = RunCounts() if counts is None else counts
        self.started = time.monotonic() - counts.seconds_before

    @property
    def model_calls(self) -> int:
        return self.counts.model_calls

    @model_calls.setter
    def model_calls(self, value: int) -> None:
        self.counts.model_calls = value

    @property
    def tool_calls(self) -> int:
        return self.counts.tool_calls

    @tool_calls.setter
    def tool_calls(self, value: int) -> None:
        self.counts.tool_calls = value

    @property
    def usage(self) -> Usage:
        return self.counts.usage

    @usage.setter
    def usage(self, value: Usage) -> None:
        self.counts.usage = value

    @property
    def last_usage(self) -> Usage:
        return self.counts.last_usage

    @property
    def cost(self) -> float | None:
        """The dollars spent (the run's descendants' included), or None without a price."""
        return self.counts.cost if self.price is not None else None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def seconds_left(self) -> float | None:
        if self.limits.max_seconds is None:
            return None
        return self.limits.max_seconds - self.elapsed

    @property
    def deadline(self) -> float | None:
        """The ``time.monotonic()`` value at which the run's time is up, or None."""
        if self.limits.max_seconds is None:
            return None
        return self.started + self.limits.max_seconds

    @property
    def model_calls_left(self) -> int:
        return self.limits.max_model_calls - self.counts.model_calls

    @property
    def tool_calls_left(self) -> int:
        return self.limits.max_tool_calls - self.counts.tool_calls

    def take_tool_call(self) -> bool:
        """Count one tool call, if the budget has one left (check and count in one step)."""
        if self.tool_calls_left <= 0:
            return False
        self.counts.tool_calls += 1  # (a ``TreeBudget`` takes its own, passed up)
        return True

    def give_back_tool_call(self) -> None:
        """A call counted by ``take_tool_call`` that was then refused."""
        self.tool_calls -= 1

    def release(self) -> None:
        """Give back a model call reserved but not made (a sub-agent's: ``TreeBudget``); the
        run calls it as it ends, however it ends."""

    def timed_out(self) -> bool:
        limit = self.limits.max_seconds
        return limit is not None and time.monotonic() - self.started >= limit

    def stop_before_model_call(self) -> StopReason | None:
        """The reason the run cannot make another model call, or None."""
        limits, counts = self.limits, self.counts
        if self.timed_out():
            return StopReason.TIMEOUT
        if counts.model_calls >= limits.max_model_calls:
            return StopReason.MAX_MODEL_CALLS
        if limits.max_tokens is not None and counts.usage.total_tokens >= limits.max_tokens:
            return StopReason.MAX_TOKENS
        if limits.max_cost is not None and (self.cost or 0.0) >= limits.max_cost:
            return StopReason.MAX_COST
        return None

    def record_model_call(self, usage: Usage) -> None:
        price = self.price
        spend_model_call(self.counts, usage, 0.0 if price is None else price.cost(usage))

    def record_model_call_failed(self) -> None:
        self.counts.model_calls += 1

    def wind_down_due(self) -> bool:
        """True when the next model call should be told to answer now."""
        return self.limits.wind_down and (
            self.model_calls_left == 1 or self.tool_calls_left <= 0 or self._one_call_affordable()
        )

    def _one_call_affordable(self) -> bool:
        """Whether the token or dollar budget has room for one call like the last, not two
        (prompts only grow, so the next call costs at least as much as the last)."""
        limits = self.limits
        if limits.max_tokens is not None:
            last = self.counts.last_usage.total_tokens
            if last and self.counts.usage.total_tokens + 2 * last > limits.max_tokens:
                return True
        if limits.max_cost is not None and self.price is not None:
            last_cost = self.price.cost(self.counts.last_usage)
            return bool(last_cost) and self.counts.cost + 2 * last_cost > limits.max_cost
        return False


class BudgetNotices:
    """The line that tells the model which budgets are running out: each budget once, when
    less than a quarter of it is left ("budget: 2 model calls, 40 s left").

    A budget the wind-down notice is about to announce at the same call (the last model
    call; no tool call left) is counted as announced and left out: "This is your last step"
    says more than "1 model call left". A step with nothing to announce costs five
    comparisons: each budget's mark (three quarters spent) is set once, and put out of reach
    once it is announced (a resumed run's, for each notice its run gave: ``notices_at``)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.announced: set[str] = set()
        limits = budget.limits
        self._marks: dict[str, float] = {  # announce when more than this is spent
            "model calls": 0.75 * limits.max_model_calls,
            "tool calls": 0.75 * limits.max_tool_calls,
            "tokens": _three_quarters(limits.max_tokens),
            "s": _three_quarters(limits.max_seconds),
            "$": _three_quarters(limits.max_cost),
        }
        for model_calls, tool_calls, tokens in budget.counts.notices_at:
            spent = {"model calls": model_calls, "tool calls": tool_calls, "tokens": tokens}
            for name, used in spent.items():
                if used > self._marks[name]:
                    self._marks[name] = math.inf
                    self.announced.add(name)

    def line(self) -> str | None:
        """The notice due before the next model call, or None (each budget at most once)."""
        budget, marks, counts = self.budget, self._marks, self.budget.counts
        if (
            counts.model_calls <= marks["model calls"]
            and counts.tool_calls <= marks["tool calls"]
            and counts.usage.total_tokens <= marks["tokens"]
            and counts.cost <= marks["$"]
            and time.monotonic() - budget.started <= marks["s"]
        ):
            return None
        return self._announce()

    def _announce(self) -> str | None:
        budget, limits = self.budget, self.budget.limits
        spent: dict[str, tuple[float, float | None]] = {
            "model calls": (budget.model_calls, limits.max_model_calls),
            "tool calls": (budget.tool_calls, limits.max_tool_calls),
            "tokens": (budget.usage.total_tokens, limits.max_tokens),
            "s": (budget.elapsed, limits.max_seconds),
            "$": (budget.cost or 0.0, limits.max_cost),
        }
        parts = []
        for name, (used, total) in spent.items():
            if total is None or used <= self._marks[name]:
                continue
            self._marks[name] = math.inf  # once
            self.announced.add(name)
            part = self._part(name, max(total - used, 0.0))
            if part is not None:
                parts.append(part)
        return notices.budget_notice(parts) if parts else None

    def _part(self, name: str, left: float) -> str | None:
        if self.budget.limits.wind_down and _wind_down_says_it(name, left):
            return None
        if name == "$":
            return f"${left:.2f}"
        if name == "s":
            return f"{int(left)} s"
        unit = name[:-1] if left == 1 else name
        return f"{int(left)} {unit}"


def _three_quarters(total: float | None) -> float:
    return math.inf if total is None else 0.75 * total


def _wind_down_says_it(name: str, left: float) -> bool:
    return (name == "model calls" and left == 1) or (name == "tool calls" and left == 0)
