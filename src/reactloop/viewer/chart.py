"""Inline SVG charts of tokens per step; no script, no external resource.

The bar chart shows each model call's input (fresh and cached) and output tokens; the line
chart shows the cumulative input with the cost model's curve, where the quadratic growth shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from reactloop.usage import CostModel, StepUsage

WIDTH = 640
HEIGHT = 240
LEFT = 64
RIGHT = 16
TOP = 16
BOTTOM = 36
COLORS = {"fresh": "#4c78a8", "cached": "#9ecae9", "output": "#f58518", "line": "#54a24b"}


def tokens_chart(steps: Sequence[StepUsage]) -> str:
    """Stacked bars (fresh + cached input) and an output bar for each model call."""
    if not steps:
        return '<p class="muted">No model calls.</p>'
    peak = max(max(s.usage.input_tokens, s.usage.output_tokens) for s in steps) or 1
    slot = (WIDTH - LEFT - RIGHT) / len(steps)
    bar = max(slot * 0.38, 1.0)
    parts = [_axes(peak, len(steps), "tokens per call")]
    for index, step in enumerate(steps):
        x = LEFT + index * slot + slot * 0.1
        usage = step.usage
        cached = min(usage.cached_tokens, usage.input_tokens)
        fresh = usage.input_tokens - cached
        label = (
            f"call {index + 1} (step {step.step}): input {usage.input_tokens:,} "
            f"(cached {cached:,}), output {usage.output_tokens:,}"
        )
        parts.append(f"<g><title>{escape(label)}</title>")
        parts.append(_rect(x, 0, fresh, peak, bar, COLORS["fresh"]))
        parts.append(_rect(x, fresh, cached, peak, bar, COLORS["cached"]))
        parts.append(_rect(x + bar, 0, usage.output_tokens, peak, bar, COLORS["output"]))
        parts.append("</g>")
    return _svg("Tokens per model call: input, cached input and output", parts)


def cumulative_chart(steps: Sequence[StepUsage], model: CostModel | None) -> str:
    """Cumulative input tokens (measured) and the cost model's ``kS + d·k(k−1)/2`` curve
    (``T`` less for each call the model takes as sent without the tool schemas)."""
    if not steps:
        return ""
    totals: list[float] = []
    running = 0.0
    for step in steps:
        running += step.usage.input_tokens
        totals.append(running)
    predicted: list[float] = []
    for call in model.call_inputs() if model else []:  # less T for a call without the tools
        predicted.append((predicted[-1] if predicted else 0.0) + call)
    peak = max([*totals, *predicted]) or 1.0
    parts = [_axes(peak, len(steps), "cumulative input tokens")]
    if predicted:
        parts.append(_polyline(predicted, peak, COLORS["output"], dashed=True))
    parts.append(_polyline(totals, peak, COLORS["line"], dashed=False))
    for index, value in enumerate(totals):
        x, y = _point(index, len(totals), value, peak)
        tip = f"after call {index + 1}: {value:,.0f} input tokens sent in total"
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{COLORS["line"]}">'
            f"<title>{escape(tip)}</title></circle>"
        )
    return _svg("Cumulative input tokens, measured and predicted by the cost model", parts)


def _svg(title: str, parts: list[str]) -> str:
    body = "".join(parts)
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{body}</svg>'
    )


def _axes(peak: float, count: int, label: str) -> str:
    plot_h = HEIGHT - TOP - BOTTOM
    lines = [
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" class="axis"/>',
        f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" '
        f'y2="{HEIGHT - BOTTOM}" class="axis"/>',
    ]
    for fraction in (0.0, 0.5, 1.0):
        y = HEIGHT - BOTTOM - plot_h * fraction
        lines.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{_short(peak * fraction)}</text>"
        )
    slot = (WIDTH - LEFT - RIGHT) / count
    every = max(1, count // 12)
    for index in range(0, count, every):
        x = LEFT + slot * (index + 0.5)
        lines.append(
            f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" class="tick">'
            f"{index + 1}</text>"
        )
    lines.append(
        f'<text x="{LEFT}" y="{HEIGHT - 4}" class="tick">{escape(label)} · model call →</text>'
    )
    return "".join(lines)


def _rect(x: float, base: float, value: float, peak: float, width: float, color: str) -> str:
    if value <= 0:
        return ""
    plot_h = HEIGHT - TOP - BOTTOM
    height = plot_h * value / peak
    y = HEIGHT - BOTTOM - plot_h * base / peak - height
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{color}"/>'
    )


def _point(index: int, count: int, value: float, peak: float) -> tuple[float, float]:
    slot = (WIDTH - LEFT - RIGHT) / count
    plot_h = HEIGHT - TOP - BOTTOM
    return LEFT + slot * (index + 0.5), HEIGHT - BOTTOM - plot_h * value / peak


def _polyline(values: Sequence[float], peak: float, color: str, *, dashed: bool) -> str:
    points = " ".join(
        f"{x:.1f},{y:.1f}"
        for x, y in (_point(i, len(values), v, peak) for i, v in enumerate(values))
    )
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"{dash}/>'


def _short(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}"
