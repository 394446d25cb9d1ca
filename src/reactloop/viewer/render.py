"""Render a journal as one self-contained HTML page (inline CSS and SVG, no script, no network).

Everything that comes from the journal is escaped: model text and tool output are hostile.
The page's Content-Security-Policy forbids scripts and any fetch, as a second line of defence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from reactloop.journal import read_journal
from reactloop.jsonfast import json_number
from reactloop.tools.toolbox import cut_head_tail
from reactloop.usage import PriceTable, UsageReport, usage_report
from reactloop.viewer.chart import COLORS, cumulative_chart, tokens_chart
from reactloop.viewer.model import (
    RunView,
    StepView,
    ToolView,
    TurnView,
    build_view,
    pretty_json_text,
)

MAX_BLOCK_CHARS = 20_000
MAX_RAW_CHARS = 8_000
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
    template = Template(
        resources.files("reactloop.viewer").joinpath("template.html").read_text("utf-8")
    )
    title = f"reactloop run — {view.task[:80]}" if view.task else "reactloop run"
    page = template.substitute(
        title=escape(title),
        cards=_cards(view, report),
        answer=_answer(view),
        task=_block("Task", view.task, "task") if view.task else "",
        run_warnings="".join(_warning(w.kind, w.message) for w in view.run_warnings),
        cost_line=escape(_cost_line(report)),
        legend=_legend(),
        charts=tokens_chart(report.steps) + cumulative_chart(report.steps, report.cost_model),
        table=_table(report),
        steps="".join(_step(step) for step in view.steps) or '<p class="muted">No steps.</p>',
        footer=escape(f"{source} · model {view.model} · protocol {view.protocol}".strip(" ·")),
    )
    return _LONE_SURROGATE.sub("\ufffd", page)


def _cards(view: RunView, report: UsageReport) -> str:
    stop = view.stop or {}
    reason = str(stop.get("stop_reason") or "interrupted (no stop event)")
    total = report.total
    values = [
        ("stop reason", reason, "stop-final_answer" if reason == "final_answer" else "stop-other"),
        ("model", view.model or "?", ""),
        ("model calls", str(stop.get("model_calls", len(report.steps))), ""),
        ("tool calls", str(stop.get("tool_calls", sum(len(s.tools) for s in view.steps))), ""),
        ("input tokens", f"{total.input_tokens:,}", ""),
        ("cached", f"{total.cached_tokens:,}", ""),
        ("output tokens", f"{total.output_tokens:,}", ""),
        ("reasoning", f"{total.reasoning_tokens:,}", ""),
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


def _answer(view: RunView) -> str:
    stop = view.stop or {}
    parts = []
    if stop.get("answer") is not None:
        parts.append(_block("Answer", str(stop["answer"]), "answer"))
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
    columns = ("call", "step", "input", "cached", "output", "reasoning")
    head = "<tr>" + "".join(f"<th>{name}</th>" for name in columns) + "</tr>"
    rows = "".join(
        f"<tr><td>{n}</td><td>{s.step}</td><td>{s.usage.input_tokens:,}</td>"
        f"<td>{s.usage.cached_tokens:,}</td><td>{s.usage.output_tokens:,}</td>"
        f"<td>{s.usage.reasoning_tokens:,}</td></tr>"
        for n, s in enumerate(report.steps, start=1)
    )
    return f"<table>{head}{rows}</table>"


def _step(step: StepView) -> str:
    badges = []
    if step.wind_down:
        badges.append('<span class="badge warn">wind-down</span>')
    if step.n_messages:
        badges.append(f'<span class="badge">{step.n_messages} messages</span>')
    body = "".join(_turn(turn) for turn in step.turns)
    body += "".join(_tool(tool) for tool in step.tools)
    body += "".join(_warning(w.kind, w.message) for w in step.warnings)
    return (
        f'<article class="step" id="step-{step.number}" data-step="{step.number}">'
        f"<h3>Step {step.number} {''.join(badges)}</h3>{body}</article>"
    )


def _turn(turn: TurnView) -> str:
    usage = turn.usage
    meta = (
        f"in {usage.input_tokens:,} · cached {usage.cached_tokens:,} · out {usage.output_tokens:,}"
    )
    if turn.seconds is not None:
        meta += f" · {turn.seconds:.2f}s"
    if turn.finish_reason:
        meta += f" · finish {turn.finish_reason}"
    parts = [f'<div class="muted">{escape(meta)}</div>']
    if turn.reasoning:
        parts.append(_details("Reasoning", turn.reasoning))
    if turn.text:
        parts.append(_block("Thought / text", turn.text, "thought"))
    if turn.final_answer is not None:
        parts.append(_block("Final answer", turn.final_answer, "final"))
    if turn.format_error:
        parts.append(f'<div class="error">Format error: {escape(turn.format_error)}</div>')
    if turn.raw is not None:
        parts.append(
            _details(
                "Raw response",
                json.dumps(turn.raw, ensure_ascii=False, indent=1, default=str),
                MAX_RAW_CHARS,
            )
        )
    return "".join(parts)


def _tool(tool: ToolView) -> str:
    status = _tool_status(tool)
    parts = [
        f'<div class="tool{"" if tool.ok is not False else " failed"}">',
        f'<div class="label">Action</div><h3><code>{escape(tool.name)}</code>{status}</h3>',
        '<div class="label">Arguments</div>',
        f"<pre>{escape(_cap(pretty_json_text(tool.arguments) or '{}'))}</pre>",
    ]
    if tool.ok is None:
        parts.append('<div class="error">No result was recorded for this call.</div>')
    elif tool.ok:
        parts.append('<div class="label">Observation</div>')
        parts.append(f"<pre>{escape(_cap(_output_text(tool.output)))}</pre>")
    else:
        parts.append('<div class="label">Error</div>')
        parts.append(f'<pre class="err">{escape(_cap(tool.error or ""))}</pre>')
    if tool.full_output_path:
        parts.append(f'<div class="muted">full output: {escape(tool.full_output_path)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _tool_status(tool: ToolView) -> str:
    badges = []
    if tool.ok is True:
        badges.append('<span class="badge ok">ok</span>')
    elif tool.ok is False:
        badges.append('<span class="badge bad">error</span>')
    if not tool.executed:
        badges.append('<span class="badge warn">not run</span>')
    if tool.truncated:
        badges.append('<span class="badge warn">truncated</span>')
    if tool.seconds is not None:
        badges.append(f'<span class="badge">{tool.seconds:.3f}s</span>')
    return "".join(badges)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, indent=2, default=str)


def _warning(kind: str, message: str) -> str:
    return f'<div class="warning"><strong>⚠ {escape(kind)}</strong>: {escape(message)}</div>'


def _block(label: str, text: str, css: str) -> str:
    label_html = f'<div class="label">{escape(label)}</div>'
    return f'<div class="{css}">{label_html}<pre>{escape(_cap(text))}</pre></div>'


def _details(label: str, text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    summary = f"<summary>{escape(label)}</summary>"
    return f"<details>{summary}<pre>{escape(_cap(text, limit))}</pre></details>"


def _cap(text: str, limit: int = MAX_BLOCK_CHARS) -> str:
    return cut_head_tail(text, limit)
