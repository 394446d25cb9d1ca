"""Render a journal as one self-contained HTML page (inline CSS and SVG, no script, no network).

Everything that comes from the journal is escaped: model text and tool output are hostile.
The page's Content-Security-Policy forbids scripts and any fetch, as a second line of defence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from reactloop.journal.writer import read_journal
from reactloop.support.json_decode import json_number
from reactloop.usage import PriceTable, UsageReport, usage_report
from reactloop.viewer.chart import COLORS, cumulative_chart, tokens_chart
from reactloop.viewer.page_data import RunView, apply_estimates, build_view
from reactloop.viewer.step_html import block_html, step_html, warning_html

# Text that was never Unicode (bytes of a non-UTF-8 argument, a "\udcff" escape in JSON) holds
# lone surrogates, which UTF-8 cannot encode; the page shows U+FFFD in their place.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def render_html(trace_path: str | Path, *, prices: PriceTable | None = None) -> str:
    """The HTML page of a journal; raises ``JournalError`` when the journal cannot be read."""
    path = Path(trace_path)
    return render_events(read_journal(path), prices=prices, source=path.name)


def render_events(
    events: Sequence[Mapping[str, Any]], *, prices: PriceTable | None = None, source: str = ""
) -> str:
    view = build_view(events)
    report = usage_report(events, prices=prices)
    if report.estimated:
        apply_estimates(view, [s.usage for s in report.steps])
    shown = [c for step in view.steps for c in step.compactions]
    for compaction, cost in zip(shown, report.compactions, strict=False):
        compaction.cache_line = cost.miss_line()
        compaction.summary_money = cost.summary_money
    template = Template(
        resources.files("reactloop.viewer").joinpath("template.html").read_text("utf-8")
    )
    title = f"reactloop run — {view.task[:80]}" if view.task else "reactloop run"
    page = template.substitute(
        title=escape(title),
        cards=_cards(view, report),
        answer=_answer(view),
        task=block_html("Task", view.task, "task") if view.task else "",
        run_warnings="".join(warning_html(w.kind, w.message) for w in view.run_warnings),
        cost_line=escape(_cost_line(report)),
        legend=_legend(),
        charts=tokens_chart(report.steps) + cumulative_chart(report.steps, report.cost_model),
        table=_table(report),
        steps="".join(step_html(step) for step in view.steps) or '<p class="muted">No steps.</p>',
        footer=escape(f"{source} · model {view.model} · protocol {view.protocol}".strip(" ·")),
    )
    return _LONE_SURROGATE.sub("\ufffd", page)


def _cards(view: RunView, report: UsageReport) -> str:
    stop = view.stop or {}
    reason = str(stop.get("stop_reason") or "interrupted (no stop event)")
    values = [
        ("stop reason", reason, "stop-final_answer" if reason == "final_answer" else "stop-other"),
        ("model", view.model or "?", "wide"),
        ("model calls", str(stop.get("model_calls", len(report.steps))), ""),
        ("tool calls", str(stop.get("tool_calls", sum(len(s.tools) for s in view.steps))), ""),
        *_token_cards(report),
    ]
    seconds = json_number(stop.get("seconds"))
    if seconds is not None:
        values.append(("seconds", f"{seconds:.2f}", ""))
    if report.money is not None:
        values.append(("cost", f"${report.money:.4f}", ""))
    return "".join(
        f'<div class="card {css}"><div class="k">{escape(k)}</div>'
        f'<div class="v">{escape(v)}</div></div>'
        for k, v, css in values
    )


def _token_cards(report: UsageReport) -> list[tuple[str, str, str]]:
    total = report.total
    if report.estimated:  # the provider reported nothing: no cached or reasoning counts to show
        return [
            ("input tokens (estimated)", f"~{total.input_tokens:,}", "estimated"),
            ("output tokens (estimated)", f"~{total.output_tokens:,}", "estimated"),
        ]
    return [
        ("input tokens", f"{total.input_tokens:,}", ""),
        ("cached", f"{total.cached_tokens:,}", ""),
        *([("cache writes", f"{total.cache_write_tokens:,}", "")] if report.cache_written else []),
        ("output tokens", f"{total.output_tokens:,}", ""),
        ("reasoning", f"{total.reasoning_tokens:,}", ""),
    ]


def _answer(view: RunView) -> str:
    stop = view.stop or {}
    parts = []
    if stop.get("answer") is not None:
        parts.append(block_html("Answer", str(stop["answer"]), "answer"))
    if stop.get("error"):
        parts.append(
            f'<div class="error"><strong>Error:</strong> {escape(str(stop["error"]))}</div>'
        )
    if view.stop is None:
        parts.append(
            '<div class="error">The journal has no stop event: the run was interrupted.</div>'
        )
    return "".join(parts)


def _cost_line(report: UsageReport) -> str:
    parts = []
    if report.cost_model is not None:
        parts.append(report.cost_model.describe())
    if report.estimated:
        parts.append("(the provider reported no usage: tokens estimated from text, ~4 chars/token)")
    if report.money is not None:
        parts.append(f"price {report.price_name}: ${report.money:.4f}")
    for issue in report.prefix_issues:
        parts.append(f"prefix changed at step {issue.step}: {issue.message}")
    return " · ".join(parts) or "No model calls."


def _legend() -> str:
    items = [
        ("fresh", "input"),
        ("cached", "cached input"),
        ("output", "output / predicted (dashed)"),
        ("line", "cumulative input"),
    ]
    return "".join(
        f'<span><span class="swatch" style="background:{COLORS[key]}"></span>{escape(text)}</span>'
        for key, text in items
    )


def _table(report: UsageReport) -> str:
    columns: tuple[str, ...]
    counts: list[tuple[int, ...]]
    if report.estimated:
        columns = ("call", "step", "input (estimated)", "output (estimated)")
        counts = [(s.usage.input_tokens, s.usage.output_tokens) for s in report.steps]
        mark = "~"
    else:
        columns = ("call", "step", *report.count_columns())
        counts = [report.counts(s.usage) for s in report.steps]
        mark = ""
    head = "<tr>" + "".join(f"<th>{escape(name)}</th>" for name in columns) + "</tr>"
    rows = "".join(
        f"<tr><td>{n}</td><td>{s.step}</td>"
        + "".join(f"<td>{mark}{value:,}</td>" for value in values)
        + "</tr>"
        for n, (s, values) in enumerate(zip(report.steps, counts, strict=True), start=1)
    )
    return f"<table>{head}{rows}</table>"
