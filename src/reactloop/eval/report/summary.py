"""From episode records to the tables of the report: one row per model × protocol, the paired
comparisons between rungs and the per-step latency and tokens.

Errored episodes are counted apart and left out of every rate: they say nothing about the model.
A task is *solved* by a rung when more than half of its non-errored trials passed.

The records stream by once (``Tally.add``), so a report of any number of episodes holds only
counters: per group, per task and per step, plus the model-call seconds the latency
percentiles are taken from (8 bytes a call). The figures equal those of the records held whole:
sums run in record order, as ``sum`` would, and means are ``fsum``'s exact partials.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Iterable
from typing import Any

from reactloop.eval.records.health import HEALTH_COUNTS
from reactloop.eval.records.metrics import (
    mcnemar_exact,
    mean_over_tasks,
    percentile,
    wilson_interval,
)
from reactloop.eval.records.record import NO_RUN, EpisodeRecord, EpisodeRun

Group = tuple[str, str]  # (rung label, protocol)
# rate name -> (numerator count, denominator count)
RATES = {
    "invalid_arguments": ("invalid_arguments", "tool_calls"),
    "unknown_tools": ("unknown_tools", "tool_calls"),
    "loop_refused": ("loop_refused", "tool_calls"),
    "format_errors": ("format_errors", "turns"),
    "truncations": ("truncations", "turns"),
    "parallel_turns": ("parallel_turns", "turns"),
    "loop_stops": ("loop_stops", "episodes"),
    "wind_downs": ("wind_down_episodes", "episodes"),
}


class Mean:
    """``statistics.fmean`` of the values added, in constant memory: the exact partial sums of
    ``math.fsum`` (Shewchuk), so the mean is the one fmean gives, bit for bit."""

    __slots__ = ("_partials", "count")

    def __init__(self) -> None:
        self.count = 0
        self._partials: list[float] = []

    def add(self, value: float) -> None:
        x = float(value)
        kept = 0
        for y in self._partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self._partials[kept] = low
                kept += 1
            x = high
        self._partials[kept:] = [x]
        self.count += 1

    def value(self) -> float | None:
        return math.fsum(self._partials) / self.count if self.count else None


class Values:
    """Numbers kept for a percentile or an in-order ``sum``: 8 bytes each while they are floats
    (the rare other number moves them to a list, so that nothing is converted)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: array[float] | list[float] = array("d")

    def add(self, value: float) -> None:
        if isinstance(self.items, array) and type(value) is not float:
            self.items = list(self.items)
        self.items.append(value)


class _Step:
    __slots__ = ("cached_tokens", "calls", "input_tokens", "seconds")

    def __init__(self) -> None:
        self.calls = 0
        self.input_tokens, self.cached_tokens, self.seconds = Mean(), Mean(), Mean()

    def add(self, step: dict[str, Any]) -> None:
        self.calls += 1
        self.input_tokens.add(step["input_tokens"])
        self.cached_tokens.add(step["cached_tokens"])
        if step["seconds"] is not None:
            self.seconds.add(step["seconds"])


class GroupTally:
    """The counters of one rung × protocol."""

    def __init__(self, model: Any) -> None:
        self.model = model  # the first record's
        self.server_models: set[str] = set()
        self.episodes = self.scored = self.passed = 0
        self.tasks: dict[str, list[int]] = {}  # task id -> [non-errored trials, passed]
        self.steps_success, self.tools_success = Mean(), Mean()
        self.health = dict.fromkeys(HEALTH_COUNTS, 0)
        self.loop_stops = self.wind_down_episodes = 0
        self.tokens = {"input_tokens": 0, "cached_tokens": 0, "output_tokens": 0}
        self.call_seconds, self.costs = Values(), Values()
        self.steps: dict[int, _Step] = {}

    def add(self, record: EpisodeRecord) -> None:
        self.episodes += 1
        run = record.run or NO_RUN
        if run.server_model:
            self.server_models.add(run.server_model)
        for step in run.steps:
            self.steps.setdefault(step["step"], _Step()).add(step)
        if record.errored:
            return
        self.scored += 1
        trials = self.tasks.setdefault(str(record.task_id), [0, 0])
        trials[0] += 1
        if record.passed:
            trials[1] += 1
            self.passed += 1
            self.steps_success.add(run.model_calls)
            self.tools_success.add(run.tool_calls)
        self._add_health(run)
        self._add_spending(run)

    def _add_health(self, run: EpisodeRun) -> None:
        for name, value in run.health.items():
            self.health[name] = self.health.get(name, 0) + int(value)
        self.loop_stops += run.stop_reason == "loop_detected"
        self.wind_down_episodes += run.health.get("wind_downs", 0) > 0

    def _add_spending(self, run: EpisodeRun) -> None:
        for name in self.tokens:
            self.tokens[name] += run.usage.get(name, 0)
        for step in run.steps:
            if step["seconds"] is not None:
                self.call_seconds.add(step["seconds"])
        if run.cost is not None:
            self.costs.add(run.cost)

    def trials(self) -> list[tuple[int, int]]:
        return [(n, c) for n, c in self.tasks.values()]

    def solved(self) -> dict[str, bool]:
        return {task: 2 * c > n for task, (n, c) in self.tasks.items() if n}

    def row(self, group: Group, k: int) -> dict[str, Any]:
        low, high = wilson_interval(self.passed, self.scored)
        trials = self.trials()
        names = sorted(self.server_models)
        row: dict[str, Any] = {
            "rung": group[0],
            "protocol": group[1],
            "model": self.model,
            "server_model": ", ".join(names) if names else None,
            "episodes": self.episodes,
            "passed": self.passed,
            "failed": self.scored - self.passed,
            "errored": self.episodes - self.scored,
            "success": self.passed / self.scored if self.scored else None,
            "ci_low": low,
            "ci_high": high,
            "k": k,
            "pass_at_1": mean_over_tasks(trials, 1),
            "pass_at_k": mean_over_tasks(trials, k),
            "pass_hat_k": mean_over_tasks(trials, k, "pass_hat_k"),
            "mean_steps_success": self.steps_success.value(),
            "mean_tool_calls_success": self.tools_success.value(),
        }
        row.update(self._health_rates())
        row.update(self._spending())
        return row

    def _health_rates(self) -> dict[str, Any]:
        counts = dict(self.health)
        counts["episodes"] = self.scored
        counts["loop_stops"] = self.loop_stops
        counts["wind_down_episodes"] = self.wind_down_episodes
        row: dict[str, Any] = {f"n_{name}": value for name, value in counts.items()}
        for rate, (numerator, denominator) in RATES.items():
            total = counts[denominator]
            row[f"rate_{rate}"] = counts[numerator] / total if total else None
        return row

    def _spending(self) -> dict[str, Any]:
        seconds = self.call_seconds.items
        return {
            **self.tokens,
            "latency_p50": percentile(seconds, 50),
            "latency_p95": percentile(seconds, 95),
            "cost": sum(self.costs.items) if self.costs.items else None,
        }

    def step_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "step": number,
                "calls": step.calls,
                "input_tokens": step.input_tokens.value(),
                "cached_tokens": step.cached_tokens.value(),
                "seconds": step.seconds.value(),
            }
            for number, step in sorted(self.steps.items())
        ]


class Tally:
    """Every table of the report from records added one at a time, in report order."""

    def __init__(self) -> None:
        self.groups: dict[Group, GroupTally] = {}

    def add(self, record: EpisodeRecord) -> None:
        group = (str(record.rung), str(record.protocol))
        if group not in self.groups:
            self.groups[group] = GroupTally(record.model)
        self.groups[group].add(record)

    def summary(self, k: int) -> list[dict[str, Any]]:
        return [tally.row(group, k) for group, tally in sorted(self.groups.items())]

    def comparisons(self) -> list[dict[str, Any]]:
        """Every pair of rungs on the same protocol, paired on the tasks both ran."""
        result = []
        for a, b in itertools.combinations(sorted(self.groups), 2):
            if a[1] == b[1]:
                result.append(_compare(a, b, self.groups[a].solved(), self.groups[b].solved()))
        return result

    def per_step(self) -> dict[Group, list[dict[str, Any]]]:
        """Per group and step number: mean input and cached tokens and mean model-call
        seconds."""
        return {group: tally.step_rows() for group, tally in sorted(self.groups.items())}


def _compare(a: Group, b: Group, solved_a: dict[str, bool], solved_b: dict[str, bool]) -> Any:
    common = sorted(set(solved_a) & set(solved_b))
    only_a = [t for t in common if solved_a[t] and not solved_b[t]]
    only_b = [t for t in common if solved_b[t] and not solved_a[t]]
    return {
        "protocol": a[1],
        "a": a[0],
        "b": b[0],
        "tasks": len(common),
        "both": sum(solved_a[t] and solved_b[t] for t in common),
        "only_a": only_a,
        "only_b": only_b,
        "p_value": mcnemar_exact(len(only_a), len(only_b)),
    }


Records = Iterable[EpisodeRecord | dict[str, Any]]
"""Records typed (``EvalOutcome.records``) or in JSON form (a results folder's)."""


def tally(records: Records) -> Tally:
    """The tables of ``records``."""
    counted = Tally()
    for record in records:
        typed = record if isinstance(record, EpisodeRecord) else EpisodeRecord.from_dict(record)
        counted.add(typed)
    return counted


def summarize(records: Records, k: int) -> list[dict[str, Any]]:
    return tally(records).summary(k)


def comparisons(records: Records) -> list[dict[str, Any]]:
    return tally(records).comparisons()


def per_step(records: Records) -> dict[Group, list[dict[str, Any]]]:
    return tally(records).per_step()
