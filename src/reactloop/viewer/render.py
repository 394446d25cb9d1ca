"""Render a journal as one self-contained HTML page (inline CSS and SVG, no script, no network).

Everything that comes from the journal is escaped: model text and tool output are hostile.
The page's Content-Security-Policy forbids scripts and any fetch, as a second line of defence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from html import escape
from importlib import resources
from pathlib import Path
from string import Template

from reactloop.journal.reader import Records, readable_events
from reactloop.journal.writer import read_journal
from reactloop.support.json_decode import json_number
from reactloop.usage import PriceTable, UsageReport, usage_report
from reactloop.viewer.chart import COLORS, cumulative_chart, tokens_chart
from reactloop.viewer.outcome import outcome
from reactloop.viewer.page_data import apply_estimates, build_views
from reactloop.viewer.page_views import RunView
from reactloop.viewer.run_html import (
    answer_html,
    cards_html,
    conversation_cards,
    count_cards,
    seconds_card,
    steps_html,
    stop_cards,
    token_cards,
    turn_html,
)
from reactloop.viewer.step_html import block_html, warning_html
from reactloop.viewer.tree import attach_children

# Text that was never Unicode (bytes of a non-UTF-8 argument, a "\udcff" escape in JSON) holds
# lone surrogates, which UTF-8 cannot encode; the page shows U+FFFD in their place.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def render_html(trace_path: str | Path, *, prices: PriceTable | None = None) -> str:
    """The HTML page of a journal; raises ``JournalError`` when the journal cannot be read."""
    path = Path(trace_path)
    return render_events(read_journal(path), prices=prices, source=path.name, journal=path)


def render_events(
    events: Records,
    *,
    prices: PriceTable | None = None,
    source: str = "",
    journal: Path | None = None,
) -> str:
    """The page of a journal's events (typed, or its lines): one run, or a conversation of
    several (``reactloop chat``: one run per turn), each turn in a section of its own; the
    sub-agents' steps under the calls that ran them (their journals beside ``journal``, or
    where they were written)."""
    typed = list(readable_events(events))  # read once, for the steps and the accounting
    views = build_views(typed)
    attach_children(views, typed, journal)
    report = usage_report(typed, prices=prices)
    if report.estimated:
        apply_estimates(views, [s.usage for s in report.steps])
    shown = [c for view in views for step in view.steps for c in step.compactions]
    for compaction, cost in zip(shown, report.compactions, strict=False):
        compaction.cache_line = cost.miss_line()
        compaction.summary_money = cost.summary_money
    template = _template()
    parts = _conversation(views, report) if len(views) > 1 else _single(views[0], report)
    first = views[0]
    page = template.substitute(
        **parts,
        cost_line=escape(_cost_line(report)),
        legend=_legend(),
        charts=tokens_chart(report.steps) + cumulative_chart(report.steps, report.cost_model),
        table=_table(report, by_turn=len(views) > 1),
        footer=escape(f"{source} · model {first.model} · protocol {first.protocol}".strip(" ·")),
    )
    return _LONE_SURROGATE.sub("\ufffd", page)


@functools.cache
def _template() -> Template:
    """The page's frame, read once a process (an eval renders a page an episode)."""
    return Template(
        resources.files("reactloop.viewer").joinpath("template.html").read_text("utf-8")
    )


def _single(view: RunView, report: UsageReport) -> dict[str, str]:
    """The page's parts for one run: its cards, answer and task at the top, then its steps."""
    title = f"reactloop run — {view.task[:80]}" if view.task else "reactloop run"
    result = outcome(view)
    stop = view.stop or {}
    cards = [
        *stop_cards(view, result),
        ("model", view.model or "?", "wide"),
        *count_cards(view, len(report.steps)),
        *token_cards(report.total, estimated=report.estimated, cache_written=report.cache_written),
        *seconds_card(json_number(stop.get("seconds"))),
        *_money_card(report),
    ]
    return {
        "title": escape(title),
        "cards": cards_html(cards),
        "answer": answer_html(view, result),
        "task": block_html("Task", view.task, "task") if view.task else "",
        "run_warnings": "".join(warning_html(w.kind, w.message) for w in view.run_warnings),
        "steps_title": "Steps",
        "steps": steps_html(view),
    }


def _conversation(views: Sequence[RunView], report: UsageReport) -> dict[str, str]:
    """The page's parts for several runs: the conversation's totals at the top, then each
    turn with its own question, cards, answer and steps."""
    title = f"reactloop conversation — {len(views)} turns"
    stops = [view.stop or {} for view in views]
    seconds = [json_number(stop.get("seconds")) for stop in stops]
    known = any(s is not None for s in seconds)
    calls = [run.calls for run in report.runs]
    cards = [
        *conversation_cards(views),
        ("model", views[0].model or "?", "wide"),
        ("model calls", str(sum(calls) or len(report.steps)), ""),
        ("tool calls", str(sum(len(s.tools) for v in views for s in v.steps)), ""),
        *token_cards(report.total, estimated=report.estimated, cache_written=report.cache_written),
        *seconds_card(sum(s for s in seconds if s is not None) if known else None),
        *_money_card(report),
    ]
    runs = {run.number: run for run in report.runs}
    turns = "".join(
        turn_html(
            view,
            runs.get(view.number),
            estimated=report.estimated,
            cache_written=report.cache_written,
        )
        for view in views
    )
    return {
        "title": escape(title),
        "cards": cards_html(cards),
        "answer": "",
        "task": "",
        "run_warnings": "",
        "steps_title": f"Conversation: {len(views)} turns",
        "steps": turns,
    }


def _money_card(report: UsageReport) -> list[tuple[str, str, str]]:
    return [] if report.money is None else [("cost", f"${report.money:.4f}", "")]


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


def _table(report: UsageReport, *, by_turn: bool = False) -> str:
    columns: tuple[str, ...]
    counts: list[tuple[int, ...]]
    if report.estimated:
        columns = ("input (estimated)", "output (estimated)")
        counts = [(s.usage.input_tokens, s.usage.output_tokens) for s in report.steps]
        mark = "~"
    else:
        columns = report.count_columns()
        counts = [report.counts(s.usage) for s in report.steps]
        mark = ""
    columns = ("call", *(("turn",) if by_turn else ()), "step", *columns)
    head = "<tr>" + "".join(f"<th>{escape(name)}</th>" for name in columns) + "</tr>"
    rows = "".join(
        f"<tr><td>{n}</td>"
        + (f"<td>{s.run + 1}</td>" if by_turn else "")
        + f"<td>{s.step}</td>"
        + "".join(f"<td>{mark}{value:,}</td>" for value in values)
        + "</tr>"
        for n, (s, values) in enumerate(zip(report.steps, counts, strict=True), start=1)
    )
    return f"<table>{head}{rows}</table>"
