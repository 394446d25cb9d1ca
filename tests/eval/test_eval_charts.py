"""The report's SVG charts, read back as XML: ``success.svg`` has one bar per rung × protocol,
its height the value's share of the axis, an error bar per interval and a legend;
``steps.svg`` has whole steps on the x axis and each group in one colour in both panels. Names
from the data stay text (never markup), and any summary makes a well-formed document."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.eval.report import charts

SVG = "{http://www.w3.org/2000/svg}"


def step(n: int, tokens: float, cached: float) -> dict[str, Any]:
    return {"step": n, "calls": 2, "input_tokens": tokens, "cached_tokens": cached, "seconds": 0.5}


def row(rung: str, protocol: str, success: Any, low: Any, high: Any, hat: Any) -> dict[str, Any]:
    return {"rung": rung, "protocol": protocol, "success": success, "ci_low": low,
            "ci_high": high, "pass_hat_k": hat, "k": 2}  # fmt: skip


DATA: dict[str, Any] = {
    "summary": [row("a", "native", 1.0, 0.5, 1.0, 1.0), row("b", "native", 0.5, 0.2, 0.8, 0.25),
                row("a", "text", 0.25, 0.1, 0.6, 0.0), row("b", "text", None, None, None, None)],
    "per_step": [  # the first group has cached tokens: a third line in the tokens panel only
        {"rung": "a", "protocol": "native", "steps": [step(1, 100, 0), step(2, 180, 90)]},
        {"rung": "b", "protocol": "text", "steps": [step(1, 120, 0), step(2, 200, 0)]},
        {"rung": "c", "protocol": "text", "steps": [step(1, 90, 0), step(2, 150, 0)]},
    ],
}  # fmt: skip


def parsed(chart: str) -> ET.Element:
    root = ET.fromstring(chart.encode("utf-8"))
    assert root.tag == SVG + "svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def bars(root: ET.Element, kind: str) -> list[tuple[str, float]]:
    """Each bar of ``kind``: its tooltip and its height."""
    found = []
    for group in root.iter(SVG + "g"):
        bar = group.find(f"{SVG}rect[@class='{kind}']")
        if bar is not None:
            found.append((group.findtext(SVG + "title") or "", float(bar.get("height", ""))))
    return found


def test_success_has_one_bar_per_rung_and_protocol_as_tall_as_its_value() -> None:
    root = parsed(charts.success_svg(DATA["summary"]))
    success, hat = bars(root, "success"), bars(root, "pass-hat")
    titles = ["a: success 1.000", "b: success 0.500", "a: success 0.250", "b: success none"]
    assert [title for title, _ in success] == titles  # by panel (protocols sorted), rung order
    full = success[0][1]
    assert full > 100
    heights = [h for _, h in success] + [h for _, h in hat]
    assert heights == [full, full / 2, full / 4, 0.0, full, full / 4, 0.0, 0.0]
    intervals = [  # whisker length: the interval's share of the axis; none without one
        float(g[0].get("y1", "")) - float(g[0].get("y2", ""))
        for g in root.iter(SVG + "g")
        if g.get("class") == "interval"
    ]
    assert [round(n / full, 2) for n in intervals] == [0.5, 0.6, 0.5]
    legend = next(g for g in root.iter(SVG + "g") if g.get("class") == "legend")
    assert texts(legend) == ["success", "pass^2"]
    assert {"native", "text", "1.0", "0.0"} <= set(texts(root))


def test_steps_has_whole_step_ticks_and_one_colour_per_group_in_both_panels() -> None:
    root = parsed(charts.steps_svg(DATA["per_step"]))
    shown = set(texts(root))
    assert {"model-call seconds per step", "input tokens per step", "1", "2"} <= shown
    assert not any(re.fullmatch(r"\d+\.\d+", t) and 1 < float(t) < 2 for t in shown)
    lines = [(p.get("stroke"), p.get("stroke-dasharray")) for p in root.iter(SVG + "polyline")]
    colours = [stroke for stroke, dash in lines if dash is None]
    assert len(colours) == 6 and len(set(colours)) == 3  # each group's line in both panels
    assert colours[::2] == colours[1::2]
    assert [stroke for stroke, dash in lines if dash] == [colours[0]]  # a's cached tokens
    legend = next(g for g in root.iter(SVG + "g") if g.get("class") == "legend")
    assert texts(legend)[:3] == ["a · native", "b · text", "c · text"]


def test_the_charts_are_written_only_with_a_summary(tmp_path: Path) -> None:
    assert charts.write_charts(tmp_path, {"summary": [], "per_step": []}) == []
    assert list(tmp_path.iterdir()) == []
    assert charts.write_charts(tmp_path, DATA) == ["success.svg", "steps.svg"]
    for name in ("success.svg", "steps.svg"):
        parsed((tmp_path / name).read_text(encoding="utf-8"))


HOSTILE = "</text><script>alert(1)</script><text>&amp;\"'\x00"


def test_a_hostile_name_stays_text() -> None:
    summary = [row(HOSTILE, HOSTILE, 0.5, 0.2, 0.8, 0.25)]
    per_step = [{"rung": HOSTILE, "protocol": "native", "steps": [step(1, 100, 0)]}]
    for chart in (charts.success_svg(summary), charts.steps_svg(per_step)):
        root = parsed(chart)
        assert {e.tag for e in root.iter()} <= {SVG + t for t in ("svg", "title", "rect", "g",
                                                                  "text", "line", "polyline",
                                                                  "circle")}  # fmt: skip
        shown = "\n".join(texts(root)) + "".join(t.text or "" for t in root.iter(SVG + "title"))
        assert HOSTILE.replace("\x00", "\ufffd") in shown


NUMBERS = ("x", "y", "width", "height", "x1", "y1", "x2", "y2", "cx", "cy", "r")
VALUES = st.none() | st.floats() | st.integers(-(10**6), 10**6) | st.text(max_size=3)
NAMES = st.text(max_size=40)
ROWS = st.fixed_dictionaries(
    {"rung": NAMES, "protocol": st.sampled_from(["native", "text"]) | NAMES, "success": VALUES,
     "ci_low": VALUES, "ci_high": VALUES, "pass_hat_k": VALUES, "k": st.integers(1, 9)}
)  # fmt: skip
STEPS = st.fixed_dictionaries(
    {"step": st.integers(-3, 500) | VALUES, "calls": st.integers(0, 5), "input_tokens": VALUES,
     "cached_tokens": VALUES, "seconds": VALUES}
)  # fmt: skip
GROUPS = st.fixed_dictionaries(
    {"rung": NAMES, "protocol": NAMES, "steps": st.lists(STEPS, max_size=8)}
)


@settings(max_examples=100, deadline=None)
@given(st.lists(ROWS, max_size=14), st.lists(GROUPS, max_size=12))
def test_any_summary_makes_well_formed_charts(
    summary: list[dict[str, Any]], per_step: list[dict[str, Any]]
) -> None:
    for chart in (charts.success_svg(summary), charts.steps_svg(per_step)):
        root = parsed(chart)
        for element in root.iter():
            for name in NUMBERS:
                if name in element.attrib:
                    assert math.isfinite(float(element.attrib[name])), element.attrib
            for pair in element.get("points", "").split():
                assert all(math.isfinite(float(n)) for n in pair.split(","))
