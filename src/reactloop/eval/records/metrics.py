"""The estimators: Wilson interval, unbiased pass@k and pass^k, exact McNemar, percentiles.

From ``n`` trials of a task of which ``c`` succeeded:
pass@k = 1 − C(n−c, k) / C(n, k), the chance that at least one of k trials drawn without
replacement succeeds; pass^k = C(c, k) / C(n, k), the chance that all k do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) without trials."""
    if not 0 <= successes <= trials:
        raise ValueError("need 0 <= successes <= trials")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n trials with c successes: 1 − C(n−c, k) / C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k from n trials with c successes: C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def mean_over_tasks(
    trials: Sequence[tuple[int, int]], k: int, estimator: str = "pass_at_k"
) -> float | None:
    """The mean of pass@k (or ``pass_hat_k``) over tasks given as (n, c); tasks with fewer
    than k trials are left out; None when none is left."""
    function = pass_at_k if estimator == "pass_at_k" else pass_hat_k
    values = [function(n, c, k) for n, c in trials if n >= k]
    return sum(values) / len(values) if values else None


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a binomial test at 1/2)."""
    if only_a < 0 or only_b < 0:
        raise ValueError("counts must not be negative")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0–100) with linear interpolation between ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
