"""The report in DIR: ``report.md``, ``results.csv`` (one row per episode), ``summary.csv`` (one
row per model × protocol), ``results.json`` (both, plus the comparisons and the per-step table),
the PNG charts, ``index.html`` and one viewer page per episode under ``pages/``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reactloop.eval.health_table import HEALTH_NOTE, health_rows, percent
from reactloop.eval.html import write_html, write_pages
from reactloop.eval.report_process import ReportProcess
from reactloop.eval.store import ResultsStore
from reactloop.eval.summary import comparisons, per_step, summarize

EPISODE_COLUMNS = (
    "key", "rung", "model", "server_model", "protocol", "task_id", "repeat", "seed",
    "temperature", "status", "reason", "stop_reason", "forced", "answer", "expected",
    "check_detail", "error", "model_calls", "tool_calls", "input_tokens", "cached_tokens",
    "output_tokens", "cost", "seconds", "reactloop_version", "tools", "trace",
)  # fmt: skip


def write_report(
    out: Path,
    records: Sequence[dict[str, Any]],
    *,
    k: int,
    endpoints: Sequence[dict[str, Any]] = (),
    report_process: ReportProcess | None = None,
) -> dict[str, Any]:
    """Write every report file; returns what ``results.json`` holds. ``endpoints``: each
    endpoint's cap history (``throttle.EndpointGate.summary``) in this run;
    ``report_process``: the child that rendered the pages and draws the charts meanwhile."""
    store = ResultsStore(out, fsync=False)
    summary = summarize(records, k)
    data = {
        "summary": summary,
        "comparisons": comparisons(records),
        "per_step": [
            {"rung": rung, "protocol": protocol, "steps": steps}
            for (rung, protocol), steps in per_step(records).items()
        ],
        "episodes": list(records),
        "endpoints": list(endpoints),
    }
    charts = report_process or ReportProcess.here()
    charts.draw(out, data)
    store.write_json_streamed(out / "results.json", data)
    store.write_text(out / "results.csv", _csv([_episode_row(r) for r in records], EPISODE_COLUMNS))
    columns = tuple(summary[0]) if summary else ("rung", "protocol")
    store.write_text(out / "summary.csv", _csv(summary, columns))
    names = charts.names()  # the child's pages done: write_pages renders only what it missed
    links = write_pages(out, records)
    store.write_text(out / "report.md", markdown(data, k=k, charts=names))
    write_html(out, data, charts=names, links=links)
    return data


def _episode_row(record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage") or {}
    row = {name: record.get(name) for name in EPISODE_COLUMNS}
    row.update(
        {name: usage.get(name) for name in ("input_tokens", "cached_tokens", "output_tokens")}
    )
    row["tools"] = " ".join(record.get("tools") or ())
    if not isinstance(row["expected"], str | int | float | type(None)):
        row["expected"] = json.dumps(row["expected"], ensure_ascii=False)
    return row


def _csv(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def number(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def markdown(data: dict[str, Any], *, k: int, charts: Sequence[str] = ()) -> str:
    summary = data["summary"]
    parts = ["# Evaluation report", ""]
    parts += _results_table(summary, k)
    parts += _health_table(summary)
    parts += _spending_table(summary)
    parts += _step_table(data["per_step"])
    parts += _comparison_table(data["comparisons"])
    parts += _errored_list(data["episodes"])
    parts += _endpoint_table(data.get("endpoints") or ())
    parts += [f"![{name}]({name})" for name in charts]
    return "\n".join(parts) + "\n"


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


def _errored_list(records: Sequence[dict[str, Any]]) -> list[str]:
    errored = [r for r in records if r["status"] == "errored"]
    if not errored:
        return []
    lines = ["## Errored episodes (run again by --resume)", ""]
    lines += [f"- `{r['key']}`: {str(r.get('error') or '')[:200]}" for r in errored]
    return [*lines, ""]


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
