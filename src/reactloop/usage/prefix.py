"""The prefix-stability check: warn when a step rewrote an earlier part of the prompt."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.usage.steps import items, step_of


@dataclass(frozen=True, kw_only=True)
class PrefixIssue:
    """A step whose prompt did not extend the previous one."""

    step: int
    message: str
    index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "index": self.index, "message": self.message}


def check_prefix(events: Iterable[Mapping[str, Any]]) -> list[PrefixIssue]:
    """Steps whose prompt rewrote an earlier part of the history without saying so.

    Two sources: the loop's own ``prefix_changed`` warnings, and the requests themselves —
    each request's ``n_messages`` must be the previous count plus the ``messages_new`` it lists.
    A ``compaction`` event between two requests is an expected change: its block (``start``,
    ``replaced``, ``block``) is applied to the count, and only what it does not explain is an
    issue (``compaction_costs`` reports what a compaction cost the cache).
    """
    issues: list[PrefixIssue] = []
    previous: int | None = None
    for event in events:
        step = step_of(event)
        kind = event.get("type")
        if kind == "warning" and event.get("kind") == "prefix_changed":
            index = event.get("index")
            message = str(event.get("message") or "an earlier message was rewritten")
            issues.append(PrefixIssue(step=step, index=_int_or_none(index), message=message))
        if kind == "compaction" and previous is not None:
            previous = compacted_count(previous, event)
        if kind != "request" or not isinstance(event.get("n_messages"), int):
            continue
        count: int = event["n_messages"]
        appended = len(items(event.get("messages_new")))
        issue = _request_issue(step, previous, count, appended)
        if issue is not None:
            issues.append(issue)
        previous = count
    return issues


def compacted_count(sent: int, event: Mapping[str, Any]) -> int:
    """The messages already sent that the next request still shares, after ``event``'s block
    (as ``ContextKeeper`` counts them): fewer when a summary replaced several; none after the
    block's start when the block reached past what was sent."""
    start = _int_or_none(event.get("start"))
    replaced = _int_or_none(event.get("replaced"))
    if start is None or replaced is None:
        return sent
    block = _int_or_none(event.get("block"))
    if block is None:  # journals before the field: trim keeps the count, a summary is one
        block = replaced if event.get("policy") == "trim" else len(items(event.get("by")))
    if sent >= start + replaced:
        return sent - replaced + block
    return min(sent, start)


def _request_issue(
    step: int, previous: int | None, count: int, appended: int
) -> PrefixIssue | None:
    before = previous or 0
    if previous is not None and count < previous:
        return PrefixIssue(
            step=step, index=count, message=f"the prompt shrank from {previous} to {count} messages"
        )
    if count != before + appended:
        kept = count - appended
        return PrefixIssue(
            step=step,
            index=max(min(kept, before), 0),
            message=(
                f"the prompt has {count} messages but the previous one had {before} and "
                f"{appended} were appended: the first {before} are no longer the same prefix"
            ),
        )
    return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
