"""SVG written by hand for the report's charts: a document, shapes, text and a plot's frame
(its axes, grid, ticks and labels), with round ticks and their labels. Every text is escaped
and stripped of the characters XML cannot hold: a name from the data never becomes markup.
No dependency: a chart is a few kilobytes of strings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
"""matplotlib's ``tab10``: the colours the charts had when matplotlib drew them, in order."""
INK, MUTED, GRID = "#222", "#555", "#e5e5e5"
_CHAR_WIDTH = 0.6  # of the font size: a sans-serif's mean advance (no font metrics here)
_NOT_XML = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"  # XML 1.0's gaps (compiled
# by re at its first use: some ms, not paid by a process that imports the charts but draws none)


def clean(value: object) -> str:
    """``value`` as the text of an element or attribute: escaped, and each character XML
    cannot hold (controls, lone surrogates) replaced by U+FFFD."""
    return escape(re.sub(_NOT_XML, "\ufffd", str(value)), quote=True)


def document(width: float, height: float, title: str, parts: Sequence[str]) -> str:
    """A standalone SVG file (``<img src>`` shows it: no script, no external resource)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}" role="img">'
        f"<title>{clean(title)}</title>"
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#fff"/>{"".join(parts)}</svg>\n'
    )


def text(
    x: float,
    y: float,
    content: str,
    *,
    size: float = 11,
    anchor: str = "start",
    rotate: float = 0.0,
    fill: str = INK,
    bold: bool = False,
) -> str:
    turn = f' transform="rotate({rotate:g} {x:.1f} {y:.1f})"' if rotate else ""
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}" '
        f'fill="{fill}"{weight}{turn}>{clean(content)}</text>'
    )


def rect(x: float, y: float, width: float, height: float, fill: str, *, kind: str = "") -> str:
    kind_attribute = f' class="{kind}"' if kind else ""
    return (
        f'<rect{kind_attribute} x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
        f'height="{height:.1f}" fill="{fill}"/>'
    )


def line(
    x1: float, y1: float, x2: float, y2: float, stroke: str, *, width: float = 1.0, dash: str = ""
) -> str:
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
        f'stroke-width="{width:g}"{dashes}/>'
    )


def polyline(points: Sequence[tuple[float, float]], stroke: str, *, dash: str = "") -> str:
    joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline points="{joined}" fill="none" stroke="{stroke}" stroke-width="1.8"{dashes}/>'


def tip(title: str, *shapes: str) -> str:
    """``shapes`` grouped under a tooltip (shown on hover when the SVG is opened itself)."""
    return f"<g><title>{clean(title)}</title>{''.join(shapes)}</g>"


def text_width(content: str, size: float) -> float:
    return len(content) * size * _CHAR_WIDTH


def shorten(content: str, limit: int) -> str:
    return content if len(content) <= limit else content[: limit - 1] + "…"


def finite(value: object) -> float | None:
    """``value`` as a float, or None when it is none (missing, not a number, NaN, infinite)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def round_ticks(top: float, count: int = 5) -> list[float]:
    """From 0 up to at least ``top``, at most about ``count`` steps of 1, 2, 2.5 or 5 × 10ⁿ."""
    top = min(top, 1e300) if top >= 1e-9 else 1.0  # no ticks in subnormals nor to infinity
    step = _round_step(top, count, (1, 2, 2.5, 5, 10))
    steps = math.ceil(top / step - 1e-9)
    return [step * n for n in range(max(steps, 1) + 1)]


def whole_ticks(low: int, high: int, count: int = 10) -> list[int]:
    """Whole numbers from ``low`` to ``high``, every 1, 2, 5, 10, … to stay near ``count``."""
    step = max(int(_round_step(max(high - low, 1), count, (1, 2, 5, 10))), 1)
    first = math.ceil(low / step) * step
    return list(range(first, high + 1, step))


def _round_step(span: float, count: int, multiples: Sequence[float]) -> float:
    """The least of ``multiples`` × 10ⁿ that makes ``span`` in at most ``count`` steps."""
    raw = span / count
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in multiples if m * power >= raw * (1 - 1e-9))


def tick_label(value: float, step: float) -> str:
    """``value`` with the decimals the ticks' ``step`` has; thousands as k, millions as M
    when the step is a whole number of them; a power of ten beyond those."""
    if not 1e-6 <= step < 1e9:
        return f"{value:.3g}"
    suffix = ""
    for scale, name in ((1e6, "M"), (1e3, "k")):
        if step >= scale and value:
            value, step, suffix = value / scale, step / scale, name
            break
    written = f"{step:.6f}".rstrip("0")
    return f"{value:.{len(written.partition('.')[2])}f}{suffix}"


@dataclass(frozen=True)
class Frame:
    """A plot's area in the document (``left``, ``top``, ``width``, ``height``) and the data
    it spans (``x_range``, ``y_range``)."""

    left: float
    top: float
    width: float
    height: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def x(self, value: float) -> float:
        return self.left + self.width * _share(value, self.x_range)

    def y(self, value: float) -> float:
        return self.top + self.height * (1 - _share(value, self.y_range))

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def y_axis(self, ticks: Sequence[float], label: str = "") -> list[str]:
        """The horizontal grid lines and the left axis with ``ticks`` and ``label``."""
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        parts, widest = [], 0.0
        for value in ticks:
            y, shown = self.y(value), tick_label(value, step)
            parts.append(line(self.left, y, self.left + self.width, y, GRID))
            parts.append(line(self.left - 4, y, self.left, y, MUTED))
            parts.append(text(self.left - 7, y + 3.5, shown, anchor="end"))
            widest = max(widest, text_width(shown, 11))
        if label:
            x, middle = self.left - 16 - widest, self.top + self.height / 2
            parts.append(text(x, middle, label, anchor="middle", rotate=-90))
        return parts

    def x_ticks(self, ticks: Sequence[float], label: str = "") -> list[str]:
        parts = []
        for value in ticks:
            x = self.x(value)
            parts.append(line(x, self.bottom, x, self.bottom + 4, MUTED))
            parts.append(text(x, self.bottom + 16, f"{value:g}", anchor="middle"))
        if label:
            parts.append(text(self.left + self.width / 2, self.bottom + 34, label, anchor="middle"))
        return parts

    def box(self, title: str) -> list[str]:
        """The left and bottom axes and the title above (drawn over the data's shapes)."""
        return [
            line(self.left, self.top, self.left, self.bottom, MUTED),
            line(self.left, self.bottom, self.left + self.width, self.bottom, MUTED),
            text(self.left + self.width / 2, self.top - 10, title, size=13, anchor="middle"),
        ]


def _share(value: float, span: tuple[float, float]) -> float:
    """Where ``value`` is in ``span`` (0 at its start, 1 at its end), kept within a panel's
    width beyond either end: a value far out is drawn just outside its panel."""
    low, high = span
    share = (value - low) / ((high - low) or 1.0)
    return min(max(share, -1.0), 2.0) if math.isfinite(share) else 2.0 * (share > 0) - (share < 0)
