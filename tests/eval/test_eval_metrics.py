"""The estimators against values computed by hand, and their laws on any counts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.eval.records.metrics import (
    mcnemar_exact,
    mean_over_tasks,
    pass_at_k,
    pass_hat_k,
    percentile,
    wilson_interval,
)


def test_wilson_interval_of_8_in_10() -> None:
    # p = 0.8, z² = 3.8415: centre (0.8 + 0.19207) / 1.38415 = 0.71674,
    # half 1.96 · sqrt(0.016 + 0.0096037) / 1.38415 = 0.22658
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-4)
    assert high == pytest.approx(0.94332, abs=1e-4)


def test_wilson_interval_at_the_edges_stays_inside_0_1_and_is_not_degenerate() -> None:
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(3.8415 / (10 + 3.8415), abs=1e-4)  # z²/(n+z²) at p = 0
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and low == pytest.approx(10 / 13.8415, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_pass_at_k_and_pass_hat_k_differ_on_two_of_three() -> None:
    # n=3, c=2, k=2: pass@2 = 1 − C(1,2)/C(3,2) = 1; pass^2 = C(2,2)/C(3,2) = 1/3
    assert pass_at_k(3, 2, 2) == 1.0
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)
    # n=5, c=2, k=3: pass@3 = 1 − C(3,3)/C(5,3) = 0.9; pass^3 = 0
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_hat_k(5, 2, 3) == 0.0
    # k = 1: both are the plain success rate
    assert pass_at_k(4, 3, 1) == pass_hat_k(4, 3, 1) == 0.75


def test_mean_over_tasks_leaves_out_tasks_with_too_few_trials() -> None:
    trials = [(3, 3), (3, 2), (3, 0), (2, 2)]  # the last has 2 trials: out for k = 3
    assert mean_over_tasks(trials, 3, "pass_hat_k") == pytest.approx(1 / 3)
    assert mean_over_tasks(trials, 3) == pytest.approx(2 / 3)
    assert mean_over_tasks([(1, 1)], 3) is None


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)  # 2 · (1/2)^5
    assert mcnemar_exact(3, 1) == pytest.approx(2 * (1 + 4) / 16)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0  # capped
    assert mcnemar_exact(1, 9) == mcnemar_exact(9, 1) == pytest.approx(2 * 11 / 1024)


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None


def test_estimators_refuse_impossible_counts() -> None:
    for bad in ((3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


counts = st.integers(min_value=1, max_value=10**4).flatmap(
    lambda n: st.tuples(
        st.just(n), st.integers(0, n), st.integers(1, min(n, 50) if n < 10**3 else 3)
    )
)


@given(counts)
def test_pass_hat_k_below_rate_below_pass_at_k(case: tuple[int, int, int]) -> None:
    n, c, k = case
    rate = c / n
    assert 0.0 <= pass_hat_k(n, c, k) <= rate + 1e-12
    assert rate - 1e-12 <= pass_at_k(n, c, k) <= 1.0


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_wilson_interval_contains_the_rate(a: int, b: int) -> None:
    successes, trials = min(a, b), max(a, b)
    low, high = wilson_interval(successes, trials)
    rate = successes / trials if trials else 0.5
    assert 0.0 <= low <= rate + 1e-12 and rate - 1e-12 <= high <= 1.0
    assert math.isfinite(low) and math.isfinite(high)


@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_is_symmetric_and_a_probability(a: int, b: int) -> None:
    p = mcnemar_exact(a, b)
    assert p == mcnemar_exact(b, a)
    assert 0.0 < p <= 1.0
