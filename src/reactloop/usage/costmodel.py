"""The cost of resending history: ``n`` steps cost ``n*S + d*n*(n-1)/2`` input tokens.

A call told to answer now (``tool_choice`` ``none``: a wind-down, the last word after a loop)
may reach the model without the tool schemas: a server or chat template may leave them out of
such a call's prompt. Its fixed prefix is then ``S − T``, ``T`` the schemas' tokens. Fitted as
a call like the others, the last call of a wound-down run pulls ``d`` down (below zero on a
short run) and the prediction far from the measure, on exactly the runs that went badly. The
journal cannot say whether the schemas went out, so the fit asks the measured inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any


def predicted_input_tokens(system_tokens: float, step_tokens: float, steps: int) -> float:
    """The cost model: ``n*S + d*n*(n-1)/2`` input tokens over ``n`` steps."""
    if steps < 0:
        raise ValueError("steps must be >= 0")
    return steps * system_tokens + step_tokens * steps * (steps - 1) / 2


@dataclass(frozen=True, kw_only=True)
class CostModel:
    """``S`` and ``d`` estimated from a run, the predicted input total and the measured one.

    ``without_tools``: the calls (from 0) fitted as sent without the tool schemas, whose
    prefix is ``S − T`` (``tool_tokens``); empty when every call is a call like the others.
    """

    system_tokens: float
    step_tokens: float
    steps: int
    measured: int
    tool_tokens: float = 0.0
    without_tools: tuple[int, ...] = ()

    @property
    def predicted(self) -> float:
        whole = predicted_input_tokens(self.system_tokens, self.step_tokens, self.steps)
        return whole - len(self.without_tools) * self.tool_tokens

    def call_inputs(self) -> list[float]:
        """The input the model predicts for each call: ``S + d·k``, less ``T`` without tools."""
        bare = set(self.without_tools)
        return [
            self.system_tokens + self.step_tokens * k - (self.tool_tokens if k in bare else 0.0)
            for k in range(self.steps)
        ]

    @property
    def new_tokens(self) -> float:
        """What the run actually added to the conversation: ``S + d*n`` (its new part)."""
        return self.system_tokens + self.step_tokens * self.steps

    def describe(self) -> str:
        n, s, d = self.steps, self.system_tokens, self.step_tokens
        formula = "nS + d·n(n−1)/2"
        line = f"cost model: n={n}, S≈{s:,.0f}, d≈{d:,.0f}"
        if self.without_tools:
            m = len(self.without_tools)
            calls = "1 call" if m == 1 else f"{m} calls"
            line += f", {calls} without the tool schemas (T≈{self.tool_tokens:,.0f})"
            formula += " − T" if m == 1 else f" − {m}T"
        line += (
            f" → {formula} = {self.predicted:,.0f} input tokens predicted, "
            f"{self.measured:,} measured"
        )
        if self.predicted:
            line += f" ({(self.measured - self.predicted) / self.predicted:+.1%})"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "S": self.system_tokens,
            "d": self.step_tokens,
            "n": self.steps,
            "T": self.tool_tokens,
            "without_tools": list(self.without_tools),
            "predicted": self.predicted,
            "measured": self.measured,
            "new_tokens": self.new_tokens,
        }


def fit_cost_model(
    inputs: Sequence[int],
    *,
    without_tools: Sequence[bool] = (),
    schema_tokens: float | None = None,
) -> CostModel | None:
    """Estimate ``S`` (the first step's input) and ``d`` (the mean growth per step).

    A least-squares line would reproduce the measured total by construction; taking the
    endpoints makes the prediction differ from the measure when growth is not linear.

    ``without_tools[k]`` marks call ``k`` as told to answer now. ``S`` and ``d`` then come from
    the other calls' endpoints, and ``T`` from how far the marked calls fall below that line:
    none (the schemas went out after all) leaves them calls like the others. With only one
    other call there is no line; ``schema_tokens`` (the schemas' size estimated from their
    text) is taken as ``T`` when a marked call is smaller than the call before it, which a
    history that only grows explains only so.
    """
    if not inputs:
        return None
    bare = tuple(k for k, flag in enumerate(without_tools[: len(inputs)]) if flag)
    bared = set(bare)
    tooled = [k for k in range(len(inputs)) if k not in bared]
    if bare and len(tooled) >= 2:
        fitted = _fit_with_line(inputs, tooled, bare)
        if fitted is not None:
            return fitted
    elif bare and tooled and schema_tokens and _shrinks(inputs, bare):
        restored = [n + schema_tokens if k in bared else n for k, n in enumerate(inputs)]
        s, d = _endpoints(restored)
        return _model(inputs, s, d, tool_tokens=schema_tokens, without_tools=bare)
    s, d = _endpoints(inputs)
    return _model(inputs, s, d)


def _fit_with_line(
    inputs: Sequence[int], tooled: Sequence[int], bare: Sequence[int]
) -> CostModel | None:
    first, last = tooled[0], tooled[-1]
    d = (inputs[last] - inputs[first]) / (last - first)
    s = inputs[first] - d * first
    tool_tokens = fmean(s + d * k - inputs[k] for k in bare)
    if tool_tokens <= 0:
        return None
    return _model(inputs, s, d, tool_tokens=tool_tokens, without_tools=tuple(bare))


def _shrinks(inputs: Sequence[int], bare: Sequence[int]) -> bool:
    return any(k > 0 and inputs[k] < inputs[k - 1] for k in bare)


def _endpoints(inputs: Sequence[float]) -> tuple[float, float]:
    steps = len(inputs)
    growth = (inputs[-1] - inputs[0]) / (steps - 1) if steps > 1 else 0.0
    return float(inputs[0]), growth


def _model(inputs: Sequence[int], s: float, d: float, **bare: Any) -> CostModel:
    return CostModel(
        system_tokens=s, step_tokens=d, steps=len(inputs), measured=sum(inputs), **bare
    )
