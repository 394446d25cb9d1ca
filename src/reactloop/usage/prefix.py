"""The prefix-stability check: warn when a step rewrote an earlier part of the prompt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import CompactionEvent, RequestEvent, RunStartEvent, WarningEvent
from reactloop.journal.warning_kinds import WarningKind


@dataclass(frozen=True, kw_only=True)
class PrefixIssue:
    """A step whose prompt did not extend the previous one."""

    step: int
    message: str
    index: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "index": self.index, "message": self.message}


def check_prefix(events: Records) -> list[PrefixIssue]:
    """Steps whose prompt rewrote an earlier part of the history without saying so.

    Two sources: the loop's own ``prefix_changed`` warnings, and the requests themselves —
    each request's ``n_messages`` must be the previous count plus the ``messages_new`` it lists.
    A ``compaction`` event between two requests is an expected change: its block (``start``,
    ``replaced``, ``block``) is applied to the count, and only what it does not explain is an
    issue (``compaction_costs`` reports what a compaction cost the cache).

    A journal may hold several runs (``reactloop chat``: one per turn). A run that starts
    afresh starts a new prompt; a follow-up (its ``run_start`` has ``continues``) lists its
    whole prompt in its first request, which must begin with the previous request's messages:
    the question and the answer before it extend that prompt, they do not change it.
    """
    issues: list[PrefixIssue] = []
    prompt = _Prompt()
    for event in readable_events(events):
        if isinstance(event, WarningEvent) and event.kind == WarningKind.PREFIX_CHANGED:
            message = event.message or "an earlier message was rewritten"
            issues.append(PrefixIssue(step=event.step, index=event.index, message=message))
        elif isinstance(event, RunStartEvent):
            prompt.start_run(follow_up=isinstance(event.continues, Mapping))
        elif isinstance(event, CompactionEvent):
            prompt.compact(event)
        elif isinstance(event, RequestEvent):
            issue = prompt.request(event.step, event.n_messages, event.messages_new)
            if issue is not None:
                issues.append(issue)
    return issues


class _Prompt:
    """The previous request's prompt: its count, and its messages while they are known (a
    compaction rewrites them in ways the journal gives only in part)."""

    def __init__(self) -> None:
        self.count: int | None = None
        self.messages: list[Any] | None = []
        self.follow_up = False

    def start_run(self, *, follow_up: bool) -> None:
        self.follow_up = follow_up and self.count is not None
        if not self.follow_up:
            self.count, self.messages = None, []

    def compact(self, event: CompactionEvent) -> None:
        if self.count is not None:
            self.count = compacted_count(self.count, event)
            self.messages = None

    def request(self, step: int, count: int, listed: list[Any]) -> PrefixIssue | None:
        if self.follow_up:
            self.follow_up = False
            issue = _follow_up_issue(step, self.count or 0, self.messages, count, listed)
        else:
            issue = _request_issue(step, self.count, count, len(listed))
        if (
            issue is None
            and self.messages is not None
            and count == len(self.messages) + len(listed)
        ):
            self.messages += listed
        else:
            self.messages = list(listed) if count == len(listed) else None
        self.count = count
        return issue


def _follow_up_issue(
    step: int, before: int, sent: list[Any] | None, count: int, listed: list[Any]
) -> PrefixIssue | None:
    """The first request of a follow-up run lists its whole prompt: the previous one's first."""
    if count != len(listed):  # a follow-up journaled as only what is new: counts alone
        return _request_issue(step, before, count, len(listed))
    if count < before:
        return PrefixIssue(
            step=step,
            index=count,
            message=f"the follow-up's prompt has {count} messages, the previous one had {before}",
        )
    if sent is None:  # the messages before it are not known (a compaction): counts alone
        return None
    changed = next((i for i, m in enumerate(sent) if listed[i] != m), None)
    if changed is None:
        return None
    return PrefixIssue(
        step=step,
        index=changed,
        message=f"the follow-up's prompt differs from the previous one at message {changed}",
    )


def compacted_count(sent: int, event: CompactionEvent) -> int:
    """The messages already sent that the next request still shares, after ``event``'s block
    (as ``ContextKeeper`` counts them): fewer when a summary replaced several; none after the
    block's start when the block reached past what was sent."""
    start: int | None = event.given("start")
    replaced: int | None = event.given("replaced")
    if start is None or replaced is None:
        return sent
    block: int | None = event.given("block")
    if block is None:  # journals before the field: trim keeps the count, a summary is one
        block = replaced if event.policy == "trim" else len(event.by)
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
