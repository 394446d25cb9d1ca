"""Protocol health of one episode, counted from its journal events (docs/journal.md).

Counts per episode; ``summary`` turns their sums into rates. Denominators: ``tool_calls``
(every call the model asked for) for invalid arguments, unknown tools and loop-guard
refusals; ``turns`` (model calls that returned) for format errors (unreadable or empty
replies), truncations (replies cut at the output limit) and parallel-call turns; episodes for
loop stops and wind-downs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

HEALTH_COUNTS = (
    "turns",
    "tool_calls",
    "invalid_arguments",
    "unknown_tools",
    "loop_refused",
    "format_errors",
    "truncations",
    "parallel_turns",
    "wind_downs",
)
_LOOP_KINDS = frozenset({"repeat", "pingpong", "cycle"})
_BAD_ARGUMENTS = ("invalid arguments", "arguments are ", "arguments must be ")


def journal_stats(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``health`` (counts), ``steps`` (per model call: input, cached, output tokens and
    seconds), ``called`` (tools that ran and succeeded), ``attempted`` (every tool asked for)
    and ``server_model`` (the model name the provider reported, when it did)."""
    health = dict.fromkeys(HEALTH_COUNTS, 0)
    steps: list[dict[str, Any]] = []
    called: list[str] = []
    attempted: list[str] = []
    server_model: str | None = None
    requested_at: dict[int, float] = {}
    for event in events:
        kind = event.get("type")
        if kind == "request":
            requested_at[int(event.get("step", 0))] = float(event.get("t", 0.0))
        elif kind == "turn":
            steps.append(_step(event, requested_at))
            _count_turn(health, event.get("turn") or {})
        elif kind == "tool_call":
            health["tool_calls"] += 1
            attempted.append(str((event.get("call") or {}).get("name", "")))
        elif kind == "tool_result":
            _count_result(health, called, event.get("result") or {})
        elif kind == "warning":
            _count_warning(health, str(event.get("kind", "")))
        elif kind == "response" and server_model is None:
            server_model = _reported_model(event.get("raw"))
    return {
        "health": health,
        "steps": steps,
        "called": called,
        "attempted": attempted,
        "server_model": server_model,
    }


def _step(event: Mapping[str, Any], requested_at: dict[int, float]) -> dict[str, Any]:
    usage = (event.get("turn") or {}).get("usage") or {}
    step = int(event.get("step", 0))
    started = requested_at.get(step)
    seconds = float(event.get("t", 0.0)) - started if started is not None else None
    return {
        "step": step,
        "input_tokens": int(usage.get("input_tokens") or 0),
        "cached_tokens": int(usage.get("cached_tokens") or 0),
        "output_tokens": int(usage.get("output_tokens") or 0),
        "seconds": round(seconds, 6) if seconds is not None else None,
    }


def _count_turn(health: dict[str, int], turn: Mapping[str, Any]) -> None:
    health["turns"] += 1
    if turn.get("finish_reason") == "length":
        health["truncations"] += 1
    if len(turn.get("tool_calls") or ()) > 1:
        health["parallel_turns"] += 1


def _count_result(health: dict[str, int], called: list[str], result: Mapping[str, Any]) -> None:
    error = str(result.get("error") or "")
    if result.get("ok"):
        called.append(str(result.get("name", "")))
    elif error.startswith("unknown tool"):
        health["unknown_tools"] += 1
    elif error.startswith(_BAD_ARGUMENTS):
        health["invalid_arguments"] += 1


def _count_warning(health: dict[str, int], kind: str) -> None:
    if kind in _LOOP_KINDS:
        health["loop_refused"] += 1
    elif kind in ("format_error", "empty_reply"):
        health["format_errors"] += 1
    elif kind == "wind_down":
        health["wind_downs"] += 1


def _reported_model(raw: Any) -> str | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("model"), str):
        return str(raw["model"])
    return None
