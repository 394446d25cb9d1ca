"""Compare two runs' events: the first tool result (or stop) where the replay did otherwise.

Tool results are compared after a ``Normalizer`` (``normalize.py``) took out what changes from
run to run by itself; a divergence keeps the raw values and shows the first normalised
difference with lines around it (``difference.py``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import StopEvent, ToolCallEvent, ToolResultEvent
from reactloop.messages import not_executed
from reactloop.replay.difference import first_difference, lines_of
from reactloop.replay.normalize import Normalizer

# Keys of a tool result's JSON that depend on where a run spilled output, not on the tool.
_UNSTABLE_CONTENT_KEYS = ("full_output",)
_CANCELLED = {"ok": False, "error": "cancelled"}
_ONE_LINE = 100  # values this short, on one line each, are shown whole
_SHOWN = 500  # a result only one side has is cut after this many characters


@dataclass(frozen=True, kw_only=True)
class Divergence:
    """The first place where the replay did not do what the recorded run did.

    ``kind``: ``tool_result`` (a tool returned something else), ``missing_result`` (the
    recorded run had more tool results), ``extra_result`` (the replay had more), ``stop``
    (same tool results, but the run ended differently). ``expected`` and ``actual`` are what
    the tools returned; ``difference``: the first normalised difference between them, with
    lines around it (empty when both are short enough to be shown whole).
    """

    kind: str
    step: int
    tool: str | None = None
    arguments: str | None = None
    expected: Any = None
    actual: Any = None
    difference: tuple[str, ...] = ()

    def describe(self) -> str:
        where = f"step {self.step}" + (f", tool {self.tool}" if self.tool else "")
        lines = [f"diverged at {where} ({self.kind})"]
        if self.arguments is not None:
            lines.append(f"  arguments: {self.arguments}")
        if self.difference:
            lines.append("  first difference (- recorded, + replayed, after normalising):")
            lines.extend(f"    {line}" for line in self.difference)
        else:
            lines.append(f"  expected:  {_show(self.expected)}")
            lines.append(f"  actual:    {_show(self.actual)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def compare(
    recorded: Records, replayed: Records, normalizer: Normalizer | None = None
) -> tuple[Divergence | None, int]:
    """The first divergence between two runs' events (typed, or journal lines), and how many
    tool results matched.

    Tool results are compared after ``normalizer`` (default: ``Normalizer()``, the default
    rules). A recorded run without a ``stop`` event was interrupted: the replay may go further.
    """
    normal = normalizer if normalizer is not None else Normalizer()
    recorded_events, replayed_events = (
        list(readable_events(recorded)),
        list(readable_events(replayed)),
    )
    old = _tool_results(recorded_events)
    new = _tool_results(replayed_events)
    for count, (before, after) in enumerate(zip(old, new, strict=False)):
        if _comparable(before, normal) != _comparable(after, normal):
            return _result_divergence(before, after, normal), count
    interrupted = not any(isinstance(e, StopEvent) for e in recorded_events)
    matched = min(len(old), len(new))
    if len(old) > matched:
        return _unmatched("missing_result", old[matched], recorded_side=True), matched
    if len(new) > matched and not interrupted:
        return _unmatched("extra_result", new[matched], recorded_side=False), matched
    return _stop_divergence(recorded_events, replayed_events), matched


def _unmatched(kind: str, item: Mapping[str, Any], *, recorded_side: bool) -> Divergence:
    content = item["content"]
    return Divergence(
        kind=kind,
        step=item["step"],
        tool=item["tool"],
        arguments=item["arguments"],
        expected=content if recorded_side else None,
        actual=None if recorded_side else content,
    )


def _tool_results(events: Sequence[JournalEvent]) -> list[dict[str, Any]]:
    arguments: dict[str, str] = {}
    results = []
    for event in events:
        if isinstance(event, ToolCallEvent):
            call = event.call
            arguments[str(call.get("id"))] = str(call.get("arguments") or "")
        elif isinstance(event, ToolResultEvent):
            result = event.result
            call_id = str(result.get("call_id"))
            results.append(
                {
                    "step": event.step,
                    "tool": str(result.get("name") or ""),
                    "call_id": call_id,
                    "arguments": arguments.get(call_id, ""),
                    "content": _content_value(event),
                }
            )
    return results


def _content_value(event: ToolResultEvent) -> Any:
    text = event.given("content")
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text
    if isinstance(value, dict):
        if value.get("ok") is False and is_cancellation(value.get("error")):
            return _CANCELLED  # cancelled while it ran or before: the same, however worded
        return {k: v for k, v in value.items() if k not in _UNSTABLE_CONTENT_KEYS}
    return value


def is_cancellation(error: Any) -> bool:
    """Whether a call's error says the run was cancelled during or before it."""
    return isinstance(error, str) and (
        error.startswith("cancelled:") or error == not_executed("cancelled")
    )


def _comparable(item: Mapping[str, Any], normal: Normalizer) -> tuple[Any, ...]:
    content = json.dumps(normal.value(item["content"]), sort_keys=True, default=str)
    return item["tool"], item["arguments"], content


def _result_divergence(
    before: Mapping[str, Any], after: Mapping[str, Any], normal: Normalizer
) -> Divergence:
    return Divergence(
        kind="tool_result",
        step=before["step"],
        tool=before["tool"]
        if before["tool"] == after["tool"]
        else f"{before['tool']} → {after['tool']}",
        arguments=before["arguments"],
        expected=before["content"],
        actual=after["content"],
        difference=difference_of(before["content"], after["content"], normal),
    )


def difference_of(expected: Any, actual: Any, normal: Normalizer) -> tuple[str, ...]:
    """The first normalised difference, or () when both values are short enough to show."""
    old, new = lines_of(normal.value(expected)), lines_of(normal.value(actual))
    if len(old) == len(new) == 1 and max(len(old[0]), len(new[0])) <= _ONE_LINE:
        return ()
    return tuple(first_difference(old, new))


def _stop_divergence(
    recorded: Sequence[JournalEvent], replayed: Sequence[JournalEvent]
) -> Divergence | None:
    old = next((e for e in reversed(recorded) if isinstance(e, StopEvent)), None)
    new = next((e for e in reversed(replayed) if isinstance(e, StopEvent)), None)
    if old is None or new is None:
        return None
    expected = {"stop_reason": old.stop_reason, "answer": old.answer}
    actual = {"stop_reason": new.stop_reason, "answer": new.answer}
    if expected == actual:
        return None
    return Divergence(
        kind="stop",
        step=new.step,
        expected=expected,
        actual=actual,
        difference=difference_of(expected, actual, Normalizer(defaults=False)),
    )


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
