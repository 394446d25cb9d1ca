"""From episode records to the tables of the report: one row per model × protocol, the paired
comparisons between rungs and the per-step latency and tokens.

Errored episodes are counted apart and left out of every rate: they say nothing about the model.
A task is *solved* by a rung when more than half of its non-errored trials passed.

The records stream by once (``Tally.add``), so a report of any number of episodes holds only
counters: per group, per task and per step, plus the model-call seconds the latency
percentiles are taken from (8 bytes a call) and each cost with its place (16 bytes a priced
episode). The records may come in any order (as their episodes finish), each with its place in
the report: the figures equal those of the records held whole and taken in report order. Means
are ``fsum``'s exact partials (any order); what depends on the order is put back in it at the
end: the costs summed in report order, as ``sum`` would, the tasks averaged over in the order
they first appear, a group's model the first record's, the health counts in the order their
names first appear.
"""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
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
from reactloop.eval.report.counters import Mean, Values

Group = tuple[str, str]  # (rung label, protocol)
# rate name -> (numerator count, denominator count)
_COUNTED = frozenset(HEALTH_COUNTS)
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
    """The counters of one rung × protocol, from records added in any order, each with its
    place in the report (``position``)."""

    def __init__(self, model: Any, position: int = 0) -> None:
        self.model, self._first = model, position  # the first record's (in report order)
        self.server_models: set[str] = set()
        self.episodes = self.scored = self.passed = 0
        self.tasks: dict[str, list[int]] = {}  # task id -> [trials not errored, passed, first]
        self.steps_success, self.tools_success = Mean(), Mean()
        self.health: Counter[str] = Counter(dict.fromkeys(HEALTH_COUNTS, 0))
        self._named: dict[str, tuple[int, int]] = {}  # a health name not of HEALTH_COUNTS: first
        self.loop_stops = self.wind_down_episodes = 0
        self.tokens = {"input_tokens": 0, "cached_tokens": 0, "output_tokens": 0}
        self.call_seconds, self.costs = Values(), Values()
        self._cost_places = array("q")  # each cost's position
        self.steps: dict[int, _Step] = {}

    def add(self, record: EpisodeRecord, position: int = 0) -> None:
        self.episodes += 1
        if position < self._first:
            self.model, self._first = record.model, position
        run = record.run or NO_RUN
        if run.server_model:
            self.server_models.add(run.server_model)
        for step in run.steps:
            self.steps.setdefault(step["step"], _Step()).add(step)
        if record.errored:
            return
        self.scored += 1
        trials = self.tasks.setdefault(str(record.task_id), [0, 0, position])
        trials[0] += 1
        trials[2] = min(trials[2], position)
        if record.passed:
            trials[1] += 1
            self.passed += 1
            self.steps_success.add(run.model_calls)
            self.tools_success.add(run.tool_calls)
        self._add_health(run, position)
        self._add_spending(run, position)

    def _add_health(self, run: EpisodeRun, position: int) -> None:
        for order, (name, value) in enumerate(run.health.items()):
            if name not in _COUNTED:
                self._named[name] = min(self._named.get(name, (position, order)), (position, order))
            self.health[name] += int(value)
        self.loop_stops += run.stop_reason == "loop_detected"
        self.wind_down_episodes += run.health.get("wind_downs", 0) > 0

    def _add_spending(self, run: EpisodeRun, position: int) -> None:
        for name in self.tokens:
            self.tokens[name] += run.usage.get(name, 0)
        for step in run.steps:
            if step["seconds"] is not None:
                self.call_seconds.add(step["seconds"])
        if run.cost is not None:
            self.costs.add(run.cost)
            self._cost_places.append(position)

    def trials(self) -> list[tuple[int, int]]:
        """Each task's (trials not errored, passed), in the order the tasks first appear."""
        ordered = sorted(self.tasks.values(), key=lambda counts: counts[2])
        return [(n, c) for n, c, _ in ordered]

    def solved(self) -> dict[str, bool]:
        return {task: 2 * c > n for task, (n, c, _) in self.tasks.items() if n}

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
        counts = {name: self.health[name] for name in HEALTH_COUNTS}
        counts |= {
            name: self.health[name] for name in sorted(self._named, key=self._named.__getitem__)
        }
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
            "cost": self._cost(),
        }

    def _cost(self) -> float | None:
        """The costs' ``sum`` in report order (a float sum depends on its order)."""
        costs, places = self.costs.items, self._cost_places
        if not costs:
            return None
        return sum(costs[n] for n in sorted(range(len(costs)), key=places.__getitem__))

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
    """Every table of the report from records added one at a time: in report order, or in
    any order, each with its ``position`` in the report (the same tables either way)."""

    def __init__(self) -> None:
        self.groups: dict[Group, GroupTally] = {}
        self._next = itertools.count()

    def add(self, record: EpisodeRecord, position: int | None = None) -> None:
        """Count ``record``; ``position``: its place in the report (default: after the last
        added without one)."""
        place = next(self._next) if position is None else position
        group = (str(record.rung), str(record.protocol))
        if group not in self.groups:
            self.groups[group] = GroupTally(record.model, place)
        self.groups[group].add(record, place)

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
