"""PNG charts (the ``eval`` extra: matplotlib): ``success.png`` (success with its 95% interval
and pass^k per rung, side by side per protocol) and ``steps.png`` (model-call seconds and input
tokens per step, whole steps on the x axis, each rung in one colour in both panels). Without
matplotlib no chart is written, and a warning on the ``reactloop.eval`` logger says so, once a
process (with logging unconfigured, Python prints it on stderr).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

NO_MATPLOTLIB = (
    "the report has no charts: matplotlib is not installed (pip install 'reactloop[eval]')"
)
_said = {"no_matplotlib": False}


def write_charts(out: Path, data: dict[str, Any]) -> list[str]:
    """The names of the charts written into ``out`` (none without matplotlib or results)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if not _said["no_matplotlib"]:
            _said["no_matplotlib"] = True
            logging.getLogger("reactloop.eval").warning(NO_MATPLOTLIB)
        return []
    if not data["summary"]:
        return []
    written = []
    for name, draw in (("success.png", _success), ("steps.png", _steps)):
        figure = draw(plt, data)
        figure.savefig(out / name, dpi=110, bbox_inches="tight")
        plt.close(figure)
        written.append(name)
    return written


def _success(plt: Any, data: dict[str, Any]) -> Any:
    summary = data["summary"]
    protocols = sorted({row["protocol"] for row in summary})
    order = list(dict.fromkeys(row["rung"] for row in summary))
    figure, axes = plt.subplots(
        1, len(protocols), figsize=(4 + 2 * len(order), 3.8), squeeze=False, layout="constrained"
    )
    for axis, protocol in zip(axes[0], protocols, strict=True):
        rows = {row["rung"]: row for row in summary if row["protocol"] == protocol}
        rungs = [r for r in order if r in rows]
        xs = list(range(len(rungs)))
        success = [_value(rows.get(r), "success") for r in rungs]
        low = [s - _value(rows.get(r), "ci_low") for s, r in zip(success, rungs, strict=True)]
        high = [_value(rows.get(r), "ci_high") - s for s, r in zip(success, rungs, strict=True)]
        hat = [_value(rows.get(r), "pass_hat_k") for r in rungs]
        axis.bar([x - 0.2 for x in xs], success, 0.4, yerr=[low, high], capsize=3, label="success")
        k = summary[0]["k"]
        axis.bar([x + 0.2 for x in xs], hat, 0.4, label=f"pass^{k}")
        axis.set_xticks(xs, rungs, rotation=20, ha="right")
        axis.set_ylim(0, 1)
        axis.set_title(protocol)
        axis.legend(fontsize=8)
    figure.suptitle("success (95% Wilson interval) and pass^k per rung")
    return figure


def _steps(plt: Any, data: dict[str, Any]) -> Any:
    figure, (seconds_axis, tokens_axis) = plt.subplots(
        1, 2, figsize=(10, 3.6), layout="constrained"
    )
    from matplotlib.ticker import MaxNLocator

    for index, group in enumerate(data["per_step"]):
        steps = [s for s in group["steps"] if s["calls"]]
        xs = [s["step"] for s in steps]
        label = f"{group['rung']} · {group['protocol']}"
        color = f"C{index % 10}"  # the group's colour in both panels, cached line or not
        seconds = [s["seconds"] or 0.0 for s in steps]
        seconds_axis.plot(xs, seconds, marker="o", color=color, label=label)
        tokens_axis.plot(
            xs, [s["input_tokens"] for s in steps], marker="o", color=color, label=label
        )
        if any(s["cached_tokens"] for s in steps):
            cached = [s["cached_tokens"] for s in steps]
            tokens_axis.plot(xs, cached, linestyle="--", color=color, label=f"{label} cached")
    seconds_axis.set(title="model-call seconds per step", xlabel="step", ylabel="seconds")
    tokens_axis.set(title="input tokens per step", xlabel="step", ylabel="tokens")
    for axis in (seconds_axis, tokens_axis):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    seconds_axis.legend(fontsize=7)
    tokens_axis.legend(fontsize=7)
    return figure


def _value(row: dict[str, Any] | None, key: str) -> float:
    value = None if row is None else row.get(key)
    return float(value) if value is not None else 0.0
