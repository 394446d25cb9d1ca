"""The cost of resending history: ``n`` steps cost ``n*S + d*n*(n-1)/2`` input tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def predicted_input_tokens(system_tokens: float, step_tokens: float, steps: int) -> float:
    """The cost model: ``n*S + d*n*(n-1)/2`` input tokens over ``n`` steps."""
    if steps < 0:
        raise ValueError("steps must be >= 0")
    return steps * system_tokens + step_tokens * steps * (steps - 1) / 2


@dataclass(frozen=True, kw_only=True)
class CostModel:
    """``S`` and ``d`` estimated from a run, the predicted input total and the measured one."""

    system_tokens: float
    step_tokens: float
    steps: int
    measured: int

    @property
    def predicted(self) -> float:
        return predicted_input_tokens(self.system_tokens, self.step_tokens, self.steps)

    @property
    def new_tokens(self) -> float:
        """What the run actually added to the conversation: ``S + d*n`` (its new part)."""
        return self.system_tokens + self.step_tokens * self.steps

    def describe(self) -> str:
        n, s, d = self.steps, self.system_tokens, self.step_tokens
        line = (
            f"cost model: n={n}, S≈{s:,.0f}, d≈{d:,.0f} → nS + d·n(n−1)/2 = "
            f"{self.predicted:,.0f} input tokens predicted, {self.measured:,} measured"
        )
        if self.predicted:
            line += f" ({(self.measured - self.predicted) / self.predicted:+.1%})"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "S": self.system_tokens,
            "d": self.step_tokens,
            "n": self.steps,
            "predicted": self.predicted,
            "measured": self.measured,
            "new_tokens": self.new_tokens,
        }


def fit_cost_model(inputs: Sequence[int]) -> CostModel | None:
    """Estimate ``S`` (the first step's input) and ``d`` (the mean growth per step).

    A least-squares line would reproduce the measured total by construction; taking the
    endpoints makes the prediction differ from the measure when growth is not linear.
    """
    if not inputs:
        return None
    steps = len(inputs)
    growth = (inputs[-1] - inputs[0]) / (steps - 1) if steps > 1 else 0.0
    return CostModel(
        system_tokens=float(inputs[0]), step_tokens=growth, steps=steps, measured=sum(inputs)
    )
