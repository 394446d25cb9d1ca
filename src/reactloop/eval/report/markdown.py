"""report.md: the results, protocol-health, spending, per-step, paired-comparison, errored and
endpoint tables, from what ``results.json`` holds; the errored episodes' lines may come from
a spool (``report.write_report`` writes them there as the records stream by).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from reactloop.eval.records.record import EpisodeRecord
from reactloop.eval.report.health_table import HEALTH_NOTE, health_rows, percent


def number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(data: dict[str, Any], *, k: int, charts: Sequence[str] = ()) -> str:
    errored = (errored_line(r) for r in map(EpisodeRecord.from_dict, data["episodes"]) if r.errored)
    return "\n".join(markdown_lines(data, k=k, charts=charts, errored=errored)) + "\n"


def markdown_lines(
    data: dict[str, Any], *, k: int, charts: Sequence[str], errored: Iterable[str]
) -> Iterator[str]:
    """report.md line by line; ``errored``: the lines of the errored episodes, each ending
    with a newline or not."""
    summary = data["summary"]
    yield from ["# Evaluation report", ""]
    yield from _results_table(summary, k)
    yield from _health_table(summary)
    yield from _spending_table(summary)
    yield from _step_table(data["per_step"])
    yield from _comparison_table(data["comparisons"])
    yield from _errored_list(errored)
    yield from _endpoint_table(data.get("endpoints") or ())
    yield from (f"![{name}]({name})" for name in charts)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _results_table(summary: Sequence[dict[str, Any]], k: int) -> list[str]:
    at_k = [f"pass@{k}"] if k > 1 else []  # at k = 1 it is pass@1 again
    header = ["rung", "protocol", "episodes", "passed", "failed", "errored",
              "success [95% CI]", "pass@1", *at_k, f"pass^{k}", "steps (success)",
              "tool calls (success)"]  # fmt: skip
    rows = [
        [
            r["rung"],
            r["protocol"],
            str(r["episodes"]),
            str(r["passed"]),
            str(r["failed"]),
            str(r["errored"]),
            f"{percent(r['success'])} [{percent(r['ci_low'])}–{percent(r['ci_high'])}]",
            percent(r["pass_at_1"]),
            *([percent(r["pass_at_k"])] if at_k else []),
            percent(r["pass_hat_k"]),
            number(r["mean_steps_success"]),
            number(r["mean_tool_calls_success"]),
        ]
        for r in summary
    ]
    note = (
        "Success over non-errored episodes; pass@k and pass^k are the unbiased estimators "
        "averaged over tasks (a task with fewer than k non-errored trials is left out)."
    )
    return ["## Results", "", note, "", *_table(header, rows)]


def _health_table(summary: Sequence[dict[str, Any]]) -> list[str]:
    header, rows = health_rows(summary)
    return ["## Protocol health", "", HEALTH_NOTE, "", *_table(header, rows)]


def _spending_table(summary: Sequence[dict[str, Any]]) -> list[str]:
    header = ["rung", "protocol", "server model", "input tokens", "cached", "output",
              "call p50 s", "call p95 s", "cost $"]  # fmt: skip
    rows = [
        [
            r["rung"],
            r["protocol"],
            r["server_model"] or "–",
            f"{r['input_tokens']:,}",
            f"{r['cached_tokens']:,}",
            f"{r['output_tokens']:,}",
            number(r["latency_p50"], 3),
            number(r["latency_p95"], 3),
            number(r["cost"], 4),
        ]
        for r in summary
    ]
    return ["## Tokens, latency, cost", "", *_table(header, rows)]


def _step_table(per_step_rows: Sequence[dict[str, Any]]) -> list[str]:
    header = ["rung", "protocol", "step", "calls", "mean input tokens", "mean cached",
              "mean call s"]  # fmt: skip
    rows = [
        [
            group["rung"],
            group["protocol"],
            str(s["step"]),
            str(s["calls"]),
            number(s["input_tokens"]),
            number(s["cached_tokens"]),
            number(s["seconds"], 3),
        ]
        for group in per_step_rows
        for s in group["steps"]
    ]
    note = (
        "Per step: does the model-call time grow with the history, or does the prefix "
        "cache keep it flat? (cached tokens only where the server reports them)"
    )
    return ["## Per step", "", note, "", *_table(header, rows)]


def _comparison_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    header = ["protocol", "A", "B", "tasks", "both solve", "only A", "only B", "McNemar p"]
    body = [
        [
            c["protocol"],
            c["a"],
            c["b"],
            str(c["tasks"]),
            str(c["both"]),
            _tasks(c["only_a"]),
            _tasks(c["only_b"]),
            f"{c['p_value']:.3g}",
        ]
        for c in rows
    ]
    note = "A task is solved when more than half of its non-errored trials passed."
    return ["## Paired comparison", "", note, "", *_table(header, body)]


def _tasks(ids: Sequence[str]) -> str:
    return f"{len(ids)}: " + ", ".join(ids) if ids else "0"


def errored_line(record: EpisodeRecord) -> str:
    return f"- `{record.key}`: {str(record.error or '')[:200]}"


def _errored_list(lines: Iterable[str]) -> Iterator[str]:
    header = ["## Errored episodes (run again by --resume)", ""]
    for line in lines:
        yield from header
        header = []
        yield line.removesuffix("\n")
    if not header:
        yield ""


def _endpoint_table(endpoints: Sequence[dict[str, Any]]) -> list[str]:
    if not any(e["overloads"] for e in endpoints):
        return []
    header = ["endpoint", "cap", "lowest", "at the end", "refusals (429/503)", "cap over time"]
    rows = [
        [
            e["endpoint"],
            str(e["max_cap"]),
            str(e["min_cap"]),
            str(e["final_cap"]),
            str(e["overloads"]),
            _cap_history(e["history"]),
        ]
        for e in endpoints
    ]
    note = (
        "Calls in flight per endpoint: halved on each burst of refusals (after the "
        "Retry-After the server asked for), one more for every cap successes. "
        "results.json holds each change."
    )
    return ["## Endpoint concurrency", "", note, "", *_table(header, rows)]


def _cap_history(history: Sequence[dict[str, Any]], shown: int = 12) -> str:
    points = [f"{p['cap']} ({p['seconds']:.1f} s)" for p in history[:shown]]
    more = f" … {len(history) - shown} more" if len(history) > shown else ""
    return " → ".join(points) + more
