"""The report's charts, SVG written by hand (``svg``): ``success.svg``, success with its 95%
Wilson interval and pass^k per rung, side by side per protocol; ``steps.svg``, model-call
seconds and input tokens per step (whole steps on the x axis, each rung × protocol in one
colour in both panels, its cached input tokens dashed). Names from the data are escaped; a
value that is missing or not a finite number draws no bar (or no point).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reactloop.eval.report.svg import (
    INK,
    MUTED,
    PALETTE,
    Frame,
    document,
    finite,
    line,
    polyline,
    rect,
    round_ticks,
    shorten,
    text,
    text_width,
    tip,
    whole_ticks,
)

CHARTS = ("success.svg", "steps.svg")
_SUCCESS, _PASS_HAT = PALETTE[0], PALETTE[1]
_SLOT, _BAR, _PLOT_HEIGHT = 72.0, 24.0, 220.0  # per rung; a bar; a panel's height
_TILT = 30.0  # degrees of a rung's name under its bars, when the names do not fit flat
_NAME = 28  # characters of a rung's name under its bars (the tooltip has it whole)


def write_charts(out: Path, data: dict[str, Any]) -> list[str]:
    """The names of the charts written into ``out`` (none without results)."""
    if not data["summary"]:
        return []
    drawn = (success_svg(data["summary"]), steps_svg(data["per_step"]))
    for name, chart in zip(CHARTS, drawn, strict=True):
        (out / name).write_text(chart, encoding="utf-8")
    return list(CHARTS)


def success_svg(summary: Sequence[dict[str, Any]]) -> str:
    rows = {(str(row["protocol"]), str(row["rung"])): row for row in summary}
    protocols = sorted({protocol for protocol, _ in rows})
    order = list(dict.fromkeys(rung for _, rung in rows))
    k = summary[0].get("k") if summary else None
    names = [shorten(rung, _NAME) for rung in order] or [""]
    widest = max(text_width(name, 11) for name in names)
    tilted = widest > _SLOT - 8
    turn = math.radians(_TILT)
    under = widest * math.sin(turn) + 18 if tilted else 22  # the names' height
    aside = max(56.0, widest * math.cos(turn) - _SLOT / 2 + 12) if tilted else 56.0
    title = f"success (95% Wilson interval) and pass^{k} per rung"
    panels = [(p, [rung for rung in order if (p, rung) in rows]) for p in protocols]
    widths = [max(_SLOT * len(rungs), 150.0) for _, rungs in panels]
    room = text_width(title, 15) + 24 - (sum(widths) + aside * len(widths) + 16)
    widths = [width + max(room, 0) / len(widths) for width in widths]  # the title's room
    parts: list[str] = []
    left = aside
    for (protocol, rungs), width in zip(panels, widths, strict=True):
        frame = Frame(left, 84, width, _PLOT_HEIGHT, (0, len(rungs)), (0, 1))
        parts += _success_panel(frame, protocol, [rows[protocol, rung] for rung in rungs], tilted)
        left += width + aside
    width = max(left + 16 - aside, text_width(title, 15) + 24)
    height = 84 + _PLOT_HEIGHT + under + 12
    parts.insert(0, text(width / 2, 24, title, size=15, anchor="middle", bold=True))
    parts.insert(1, _success_legend(width / 2, 48, k))
    return document(width, height, title, parts)


def _success_panel(
    frame: Frame, protocol: str, rows: Sequence[dict[str, Any]], tilted: bool
) -> list[str]:
    parts = frame.y_axis([n / 5 for n in range(6)])
    for index, row in enumerate(rows):
        middle = frame.x(index + 0.5)
        rung = str(row["rung"])
        success = finite(row.get("success"))
        parts.append(_bar(frame, middle - _BAR - 1, success, _SUCCESS, "success", rung))
        parts.append(_interval(frame, middle - _BAR / 2 - 1, success, row))
        hat = finite(row.get("pass_hat_k"))
        parts.append(_bar(frame, middle + 1, hat, _PASS_HAT, "pass-hat", rung))
        name = shorten(rung, _NAME)
        if tilted:
            parts.append(text(middle + 4, frame.bottom + 14, name, anchor="end", rotate=-_TILT))
        else:
            parts.append(text(middle, frame.bottom + 16, name, anchor="middle"))
    return parts + frame.box(protocol)


def _bar(frame: Frame, x: float, value: float | None, colour: str, kind: str, rung: str) -> str:
    shown = min(max(value or 0.0, 0.0), 1.0)
    top = frame.y(shown)
    label = "none" if value is None else f"{value:.3f}"
    bar = rect(x, top, _BAR, frame.bottom - top, colour, kind=kind)
    return tip(f"{rung}: {kind} {label}", bar)


def _interval(frame: Frame, x: float, success: float | None, row: dict[str, Any]) -> str:
    """The error bar of ``success``: its 95% interval (nothing without one)."""
    low, high = finite(row.get("ci_low")), finite(row.get("ci_high"))
    if success is None or low is None or high is None:
        return ""
    bottom, top = frame.y(min(max(low, 0.0), 1.0)), frame.y(min(max(high, 0.0), 1.0))
    whisker = [
        line(x, bottom, x, top, INK, width=1.2),
        line(x - 4, top, x + 4, top, INK, width=1.2),
        line(x - 4, bottom, x + 4, bottom, INK, width=1.2),
    ]
    return f'<g class="interval">{"".join(whisker)}</g>'


def _success_legend(middle: float, y: float, k: object) -> str:
    entries = [(_SUCCESS, "success"), (_PASS_HAT, f"pass^{k}")]
    total = sum(18 + text_width(name, 11) + 20 for _, name in entries) - 20
    x = middle - total / 2
    parts = []
    for colour, name in entries:
        parts.append(rect(x, y - 9, 12, 12, colour))
        parts.append(text(x + 18, y + 1, name))
        x += 18 + text_width(name, 11) + 20
    return f'<g class="legend">{"".join(parts)}</g>'


def steps_svg(per_step: Sequence[dict[str, Any]]) -> str:
    lines = [_Line(index, group) for index, group in enumerate(per_step)]
    steps = [step for each in lines for step, *_ in each.points] or [1]
    low, high = min(steps), max(steps)
    pad = max(0.5, (high - low) * 0.04)
    x_range = (low - pad, high + pad)
    seconds = round_ticks(max([p[1] or 0.0 for each in lines for p in each.points], default=0))
    tokens = round_ticks(max([each.peak for each in lines], default=0))
    panel, gap = 400.0, 96.0
    left_frame = Frame(72, 44, panel, _PLOT_HEIGHT, x_range, (0, seconds[-1]))
    right_frame = Frame(72 + panel + gap, 44, panel, _PLOT_HEIGHT, x_range, (0, tokens[-1]))
    ticks = whole_ticks(low, high)
    parts = [*left_frame.y_axis(seconds, "seconds"), *right_frame.y_axis(tokens, "tokens")]
    parts += left_frame.x_ticks(ticks, "step") + right_frame.x_ticks(ticks, "step")
    for each in lines:
        parts += each.seconds(left_frame) + each.tokens(right_frame)
    if not any(p[1] is not None for each in lines for p in each.points):
        parts.append(_no_data(left_frame, "no model-call timings"))
    parts += left_frame.box("model-call seconds per step")
    parts += right_frame.box("input tokens per step")
    width = right_frame.left + panel + 24
    legend, legend_height = _steps_legend(lines, 72, width - 96, left_frame.bottom + 58)
    height = left_frame.bottom + 58 + legend_height
    return document(width, height, "model-call seconds and input tokens per step", [*parts, legend])


class _Line:
    """One rung × protocol's steps with model calls: (step, seconds, tokens, cached, calls)."""

    def __init__(self, index: int, group: dict[str, Any]) -> None:
        self.colour = PALETTE[index % len(PALETTE)]
        self.label = f"{group.get('rung')} · {group.get('protocol')}"
        self.points = [
            (step, finite(s.get("seconds")), finite(s.get("input_tokens")),
             finite(s.get("cached_tokens")), s.get("calls"))
            for s in group.get("steps") or ()
            if s.get("calls") and (step := _whole(s.get("step"))) is not None
        ]  # fmt: skip
        self.cached = any(p[3] for p in self.points)
        self.peak = max((v for p in self.points for v in (p[2], p[3]) if v is not None), default=0)

    def seconds(self, frame: Frame) -> list[str]:
        return self._series(frame, 1, "{:.2f} s", "")

    def tokens(self, frame: Frame) -> list[str]:
        drawn = self._series(frame, 2, "{:,.0f} input tokens", "")
        cached = self._series(frame, 3, "{:,.0f} cached input tokens", "5 3")
        return drawn + (cached if self.cached else [])

    def _series(self, frame: Frame, column: int, shown: str, dash: str) -> list[str]:
        points = [(p[0], p[column], p[4]) for p in self.points if p[column] is not None]
        at = [(frame.x(step), frame.y(value or 0.0)) for step, value, _ in points]
        parts = [polyline(at, self.colour, dash=dash)] if len(at) > 1 else []
        for (x, y), (step, value, calls) in zip(at, points, strict=True):
            marker = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{2.5 if dash else 3.5}" '
            marker += f'fill="{"#fff" if dash else self.colour}" stroke="{self.colour}"/>'
            about = f"{self.label}, step {step}: {shown.format(value)} (mean of {calls} calls)"
            parts.append(tip(about, marker))
        return parts


def _whole(value: object) -> int | None:
    """A step's number (a count: a whole number, not beyond 2³¹), else None."""
    number = finite(value)
    whole = number is not None and number.is_integer() and abs(number) < 2**31
    return int(number) if whole and number is not None else None


def _no_data(frame: Frame, words: str) -> str:
    middle = frame.top + frame.height / 2
    return text(frame.left + frame.width / 2, middle, words, anchor="middle", fill=MUTED)


def _steps_legend(
    lines: Sequence[_Line], left: float, width: float, top: float
) -> tuple[str, float]:
    """The legend under the panels, its entries wrapped into rows; and its height."""
    entries = [(each.colour, shorten(each.label, 60), "") for each in lines]
    if any(each.cached for each in lines):
        entries.append((MUTED, "cached input tokens (dashed, same colour)", "5 3"))
    parts, x, y = [], left, top
    for colour, name, dash in entries:
        room = 30 + text_width(name, 11) + 18
        if x > left and x + room > left + width:
            x, y = left, y + 18
        parts.append(line(x, y - 4, x + 22, y - 4, colour, width=1.8, dash=dash))
        parts.append(text(x + 28, y, name))
        x += room
    return f'<g class="legend">{"".join(parts)}</g>', y - top + 18
