"""Limits of a run, the budget that counts against them, and the stop reasons."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from reactloop import notices
from reactloop.messages import Usage


class StopReason(StrEnum):
    """Why a run ended. Exactly one per run."""

    FINAL_ANSWER = "final_answer"
    MAX_MODEL_CALLS = "max_model_calls"
    MAX_TOOL_CALLS = "max_tool_calls"
    MAX_TOKENS = "max_tokens"
    MAX_COST = "max_cost"
    TIMEOUT = "timeout"
    LOOP_DETECTED = "loop_detected"
    FORMAT_ERRORS = "format_errors"
    MODEL_ERROR = "model_error"
    TRUNCATED = "truncated"
    CONTENT_FILTER = "content_filter"
    CANCELLED = "cancelled"
    JOURNAL_ERROR = "journal_error"


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Caps on one run. The defaults follow the seeds: 8 model calls, 16 tool calls.

    ``max_tokens`` caps input plus output tokens over the run; ``max_cost`` caps its cost in
    dollars (it needs the model's ``Price``: ``Agent(..., price=...)``). ``repeat_warn`` and
    ``repeat_stop``: the n-th identical call (same tool, same canonical arguments) gets a
    warning instead of running, and stops the run. ``pingpong_warn`` and ``pingpong_stop``:
    the rounds in a row of the same two calls (A→B) or three (A→B→C) that warn and stop.
    ``max_format_errors``: replies in a row that could not be understood. ``wind_down``: tell
    the model to answer when one model call is left, when tool calls run out, or when the
    token or dollar budget leaves room for one more call like the last one but not for two.

    Long runs (docs/long_runs.md): ``max_observation_chars`` is the observation budget, the
    most one result sends to the model (None: the toolbox's own, 8,000 by default); what is
    cut stays readable with the built-in ``read_output``. ``near_repeat_warn`` and
    ``near_repeat_stop``: the calls in a row of one tool, with arguments that differ only
    slightly, whose results bring nothing new, that warn and stop (None: not checked).
    ``context_tokens`` is the prompt size the history must stay within (None: the model's
    window when its adapter knows it, else unchecked); ``context_policy`` is what happens
    near it: ``"none"`` (or None, the default) stops with ``max_tokens``, ``"trim"`` cuts
    the oldest results to a stub, ``"summarize"`` has the model summarise the oldest steps.
    ``remind`` repeats a line of the task after each compaction. ``budget_notices`` (on by
    default): when less than a quarter of a budget is left, the model is told so, once per
    budget, in one line after the observations, before its next call.
    """

    max_model_calls: int = 8
    max_tool_calls: int = 16
    max_seconds: float | None = 600.0
    max_tokens: int | None = None
    max_cost: float | None = None
    repeat_warn: int = 2
    repeat_stop: int = 3
    pingpong_warn: int = 2
    pingpong_stop: int = 3
    max_format_errors: int = 3
    max_truncation_retries: int = 1
    wind_down: bool = True
    max_observation_chars: int | None = None
    near_repeat_warn: int | None = 4
    near_repeat_stop: int | None = 5
    context_tokens: int | None = None
    context_policy: str | None = None
    remind: bool = False
    budget_notices: bool = True

    def __post_init__(self) -> None:
        for name in ("max_model_calls", "max_tool_calls", "max_format_errors"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 2 <= self.repeat_warn <= self.repeat_stop:
            raise ValueError("need 2 <= repeat_warn <= repeat_stop")
        if not 2 <= self.pingpong_warn <= self.pingpong_stop:
            raise ValueError("need 2 <= pingpong_warn <= pingpong_stop")
        self._check_long_runs()

    def _check_long_runs(self) -> None:
        if self.max_observation_chars is not None and self.max_observation_chars < 200:
            raise ValueError("max_observation_chars must be at least 200")
        warn, stop = self.near_repeat_warn, self.near_repeat_stop
        if (warn is None) != (stop is None) or (
            warn is not None and stop is not None and not 2 <= warn <= stop
        ):
            raise ValueError("need 2 <= near_repeat_warn <= near_repeat_stop, or both None")
        if self.context_policy is not None and self.context_policy not in CONTEXT_POLICIES:
            raise ValueError(f"context_policy must be one of {', '.join(CONTEXT_POLICIES)}")
        if self.context_tokens is not None and self.context_tokens < 256:
            raise ValueError("context_tokens must be at least 256")


CONTEXT_POLICIES = ("none", "trim", "summarize")


class Pricer(Protocol):
    def cost(self, usage: Usage) -> float: ...


_NO_USAGE = Usage()


class Budget:
    """Counts a run's spending against its ``Limits``; ``cost`` is None without a price."""

    def __init__(self, limits: Limits, price: Pricer | None = None) -> None:
        if limits.max_cost is not None and price is None:
            raise ValueError("max_cost needs the model's price")
        self.limits = limits
        self.price = price
        self.cost: float | None = 0.0 if price is not None else None
        self.started = time.monotonic()
        self.model_calls = 0
        self.tool_calls = 0
        self.usage = Usage()
        self.last_usage = Usage()  # of the latest model call
        self.last_cost = 0.0

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
        return self.limits.max_model_calls - self.model_calls

    @property
    def tool_calls_left(self) -> int:
        return self.limits.max_tool_calls - self.tool_calls

    def timed_out(self) -> bool:
        limit = self.limits.max_seconds
        return limit is not None and time.monotonic() - self.started >= limit

    def stop_before_model_call(self) -> StopReason | None:
        """The reason the run cannot make another model call, or None."""
        limits = self.limits
        if self.timed_out():
            return StopReason.TIMEOUT
        if self.model_calls >= limits.max_model_calls:
            return StopReason.MAX_MODEL_CALLS
        if limits.max_tokens is not None and self.usage.total_tokens >= limits.max_tokens:
            return StopReason.MAX_TOKENS
        if limits.max_cost is not None and (self.cost or 0.0) >= limits.max_cost:
            return StopReason.MAX_COST
        return None

    def record_model_call(self, usage: Usage) -> None:
        self.model_calls += 1
        self.last_usage = usage
        if usage != _NO_USAGE:
            self.usage = self.usage + usage
        if self.price is not None:
            self.last_cost = self.price.cost(usage)
            self.cost = (self.cost or 0.0) + self.last_cost

    def record_model_call_failed(self) -> None:
        self.model_calls += 1

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
            last = self.last_usage.total_tokens
            if last and self.usage.total_tokens + 2 * last > limits.max_tokens:
                return True
        if limits.max_cost is not None and self.last_cost:
            return (self.cost or 0.0) + 2 * self.last_cost > limits.max_cost
        return False


class BudgetNotices:
    """The line that tells the model which budgets are running out: each budget once, when
    less than a quarter of it is left ("budget: 2 model calls, 40 s left").

    A budget the wind-down notice is about to announce at the same call (the last model
    call; no tool call left) is counted as announced and left out: "This is your last step"
    says more than "1 model call left". A step with nothing to announce costs five
    comparisons: each budget's mark (three quarters spent) is set once, and put out of reach
    once it is announced."""

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

    def line(self) -> str | None:
        """The notice due before the next model call, or None (each budget at most once)."""
        budget, marks = self.budget, self._marks
        if (
            budget.model_calls <= marks["model calls"]
            and budget.tool_calls <= marks["tool calls"]
            and budget.usage.total_tokens <= marks["tokens"]
            and (budget.cost or 0.0) <= marks["$"]
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
