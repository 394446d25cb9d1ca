"""Limits of a run and the stop reasons (what counts against them: ``loop/budget.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    AWAITING_APPROVAL = "awaiting_approval"  # calls wait for a person: ``reactloop approve``
    JOURNAL_ERROR = "journal_error"


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Caps on one run. The defaults are the textbook loop's: 8 model calls, 16 tool calls.

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
