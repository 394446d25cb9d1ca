"""The protocol-health table, one row per model × protocol: report.md's and index.html's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _rate(row: dict[str, Any], name: str, count: str, total: str) -> str:
    return f"{percent(row[f'rate_{name}'])} ({row[f'n_{count}']}/{row[f'n_{total}']})"


HEALTH_NOTE = (
    "Invalid arguments, unknown tools and loop-guard refusals are shares of tool calls; "
    "format errors, truncations and parallel-call turns of turns (model calls); loop "
    "stops and wind-downs of episodes. Counts in brackets."
)


def health_rows(summary: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The protocol-health table (header, rows) of report.md and index.html."""
    header = ["rung", "protocol", "invalid args", "unknown tools", "loop-guard refusals",
              "format errors", "truncations", "parallel-call turns", "loop stops",
              "wind-downs"]  # fmt: skip
    rows = [
        [
            r["rung"],
            r["protocol"],
            _rate(r, "invalid_arguments", "invalid_arguments", "tool_calls"),
            _rate(r, "unknown_tools", "unknown_tools", "tool_calls"),
            _rate(r, "loop_refused", "loop_refused", "tool_calls"),
            _rate(r, "format_errors", "format_errors", "turns"),
            _rate(r, "truncations", "truncations", "turns"),
            _rate(r, "parallel_turns", "parallel_turns", "turns"),
            _rate(r, "loop_stops", "loop_stops", "episodes"),
            _rate(r, "wind_downs", "wind_down_episodes", "episodes"),
        ]
        for r in summary
    ]
    return header, rows
