"""``steps.png``: whole steps on the x axis, each group in one colour in both panels; without
matplotlib, no chart and one warning that says so."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from reactloop.eval.report import charts

pytest.importorskip("matplotlib")


def step(n: int, tokens: float, cached: float) -> dict[str, Any]:
    return {"step": n, "calls": 2, "input_tokens": tokens, "cached_tokens": cached, "seconds": 0.5}


DATA: dict[str, Any] = {
    "summary": [{"rung": "a", "protocol": "native", "success": 1.0, "ci_low": 0.5,
                 "ci_high": 1.0, "pass_hat_k": 1.0, "k": 2}],
    "per_step": [  # the first group has cached tokens: a third line in the tokens panel only
        {"rung": "a", "protocol": "native", "steps": [step(1, 100, 0), step(2, 180, 90)]},
        {"rung": "b", "protocol": "text", "steps": [step(1, 120, 0), step(2, 200, 0)]},
        {"rung": "c", "protocol": "text", "steps": [step(1, 90, 0), step(2, 150, 0)]},
    ],
}  # fmt: skip


def test_steps_chart_has_whole_step_ticks_and_one_colour_per_group() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = charts._steps(plt, DATA)
    try:
        seconds_axis, tokens_axis = figure.axes
        figure.canvas.draw()
        for axis in (seconds_axis, tokens_axis):
            ticks = [t for t in axis.get_xticks() if 1 <= t <= 2]
            assert ticks and all(float(t).is_integer() for t in ticks), ticks
        colours = {line.get_label(): line.get_color() for line in seconds_axis.get_lines()}
        for line in tokens_axis.get_lines():
            group = line.get_label().removesuffix(" cached")
            assert line.get_color() == colours[group], group
        assert len(set(colours.values())) == 3
    finally:
        plt.close(figure)


def test_without_matplotlib_no_chart_is_written_and_it_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    monkeypatch.setitem(charts._said, "no_matplotlib", False)
    with caplog.at_level(logging.WARNING, logger="reactloop.eval"):
        assert charts.write_charts(tmp_path, DATA) == []
        assert charts.write_charts(tmp_path, DATA) == []
    assert [r.getMessage() for r in caplog.records] == [charts.NO_MATPLOTLIB]
    assert "matplotlib is not installed" in charts.NO_MATPLOTLIB
    assert list(tmp_path.iterdir()) == []
