"""From episode records to the tables of the report: one row per model × protocol, the paired
comparisons between rungs and the per-step latency and tokens.

Errored episodes are counted apart and left out of every rate: they say nothing about the model.
A task is *solved* by a rung when more than half of its non-errored trials passed.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from reactloop.eval.health import HEALTH_COUNTS
from reactloop.eval.metrics import mcnemar_exact, mean_over_tasks, percentile, wilson_interval

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


def groups(records: Iterable[dict[str, Any]]) -> dict[Group, list[dict[str, Any]]]:
    grouped: dict[Group, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record["rung"], record["protocol"]].append(record)
    return dict(grouped)


def task_trials(records: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """task id -> (non-errored trials, passed trials)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        if record["status"] != "errored":
            counts[record["task_id"]][0] += 1
            counts[record["task_id"]][1] += record["status"] == "passed"
    return {task: (n, c) for task, (n, c) in counts.items()}


def summarize(records: Sequence[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    return [summary_row(group, rows, k) for group, rows in sorted(groups(records).items())]


def summary_row(group: Group, records: Sequence[dict[str, Any]], k: int) -> dict[str, Any]:
    scored = [r for r in records if r["status"] != "errored"]
    passed = [r for r in scored if r["status"] == "passed"]
    low, high = wilson_interval(len(passed), len(scored))
    trials = list(task_trials(records).values())
    row: dict[str, Any] = {
        "rung": group[0],
        "protocol": group[1],
        "model": records[0]["model"],
        "server_model": _joined(r.get("server_model") for r in records),
        "episodes": len(records),
        "passed": len(passed),
        "failed": len(scored) - len(passed),
        "errored": len(records) - len(scored),
        "success": len(passed) / len(scored) if scored else None,
        "ci_low": low,
        "ci_high": high,
        "k": k,
        "pass_at_1": mean_over_tasks(trials, 1),
        "pass_at_k": mean_over_tasks(trials, k),
        "pass_hat_k": mean_over_tasks(trials, k, "pass_hat_k"),
        "mean_steps_success": _mean(r["model_calls"] for r in passed),
        "mean_tool_calls_success": _mean(r["tool_calls"] for r in passed),
    }
    row.update(health_rates(scored))
    row.update(spending(scored))
    return row


def health_rates(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts = dict.fromkeys(HEALTH_COUNTS, 0)
    for record in records:
        for name, value in (record.get("health") or {}).items():
            counts[name] = counts.get(name, 0) + int(value)
    counts["episodes"] = len(records)
    counts["loop_stops"] = sum(r.get("stop_reason") == "loop_detected" for r in records)
    counts["wind_down_episodes"] = sum(
        (r.get("health") or {}).get("wind_downs", 0) > 0 for r in records
    )
    row: dict[str, Any] = {f"n_{name}": value for name, value in counts.items()}
    for rate, (numerator, denominator) in RATES.items():
        total = counts[denominator]
        row[f"rate_{rate}"] = counts[numerator] / total if total else None
    return row


def spending(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    usage = [r.get("usage") or {} for r in records]
    seconds = [
        s["seconds"] for r in records for s in r.get("steps", ()) if s["seconds"] is not None
    ]
    costs = [r["cost"] for r in records if r.get("cost") is not None]
    return {
        "input_tokens": sum(u.get("input_tokens", 0) for u in usage),
        "cached_tokens": sum(u.get("cached_tokens", 0) for u in usage),
        "output_tokens": sum(u.get("output_tokens", 0) for u in usage),
        "latency_p50": percentile(seconds, 50),
        "latency_p95": percentile(seconds, 95),
        "cost": sum(costs) if costs else None,
    }


def solved_tasks(records: Sequence[dict[str, Any]]) -> dict[str, bool]:
    return {task: 2 * c > n for task, (n, c) in task_trials(records).items() if n}


def comparisons(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of rungs on the same protocol, paired on the tasks both ran."""
    grouped = groups(records)
    result = []
    for a, b in itertools.combinations(sorted(grouped), 2):
        if a[1] != b[1]:
            continue
        solved_a, solved_b = solved_tasks(grouped[a]), solved_tasks(grouped[b])
        common = sorted(set(solved_a) & set(solved_b))
        only_a = [t for t in common if solved_a[t] and not solved_b[t]]
        only_b = [t for t in common if solved_b[t] and not solved_a[t]]
        result.append(
            {
                "protocol": a[1],
                "a": a[0],
                "b": b[0],
                "tasks": len(common),
                "both": sum(solved_a[t] and solved_b[t] for t in common),
                "only_a": only_a,
                "only_b": only_b,
                "p_value": mcnemar_exact(len(only_a), len(only_b)),
            }
        )
    return result


def per_step(records: Sequence[dict[str, Any]]) -> dict[Group, list[dict[str, Any]]]:
    """Per group and step number: mean input and cached tokens and mean model-call seconds."""
    table: dict[Group, list[dict[str, Any]]] = {}
    for group, rows in sorted(groups(records).items()):
        by_step: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for record in rows:
            for step in record.get("steps", ()):
                by_step[step["step"]].append(step)
        table[group] = [_step_means(n, steps) for n, steps in sorted(by_step.items())]
    return table


def _step_means(step: int, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "step": step,
        "calls": len(steps),
        "input_tokens": fmean(s["input_tokens"] for s in steps),
        "cached_tokens": fmean(s["cached_tokens"] for s in steps),
        "seconds": _mean(s["seconds"] for s in steps if s["seconds"] is not None),
    }


def _mean(values: Iterable[float]) -> float | None:
    listed = list(values)
    return fmean(listed) if listed else None


def _joined(values: Iterable[str | None]) -> str | None:
    names = sorted({v for v in values if v})
    return ", ".join(names) if names else None
