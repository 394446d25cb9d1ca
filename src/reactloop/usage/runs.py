"""The runs of a journal: one for ``reactloop run``, one per turn for ``reactloop chat``.

Each run has its ``run_start`` (its task: the turn's question) and, unless it was interrupted,
its ``stop``; its calls' tokens (its compactions' summarising calls included) are its own, the
conversation's are the sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import RunStartEvent, StopEvent
from reactloop.messages import Usage
from reactloop.usage.compaction_cost import CompactionCost
from reactloop.usage.steps import StepUsage


@dataclass(frozen=True, kw_only=True)
class RunUsage:
    """One run: ``number`` from 1; ``stop_reason`` None when the journal has no ``stop`` for
    it (the run was interrupted); ``forced`` as the ``stop`` says; ``calls`` counts its model
    turns, ``usage`` sums them and its summarising calls."""

    number: int
    task: str
    stop_reason: str | None
    forced: bool = False
    calls: int = 0
    usage: Usage = field(default_factory=Usage)

    @property
    def interrupted(self) -> bool:
        return self.stop_reason is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.number,
            "task": self.task,
            "stop_reason": self.stop_reason,
            "forced": self.forced,
            "model_calls": self.calls,
            "usage": self.usage.to_dict(),
        }


def run_usages(
    events: Records,
    steps: Sequence[StepUsage],
    compactions: Sequence[CompactionCost] = (),
) -> list[RunUsage]:
    """The runs of ``events`` in order, each with the calls of ``steps`` and the summarising
    calls of ``compactions`` that are its own.

    A journal without any ``run_start`` (cut before it) is one run without a task or stop."""
    runs: list[tuple[str, StopEvent | None]] = []
    for event in readable_events(events):
        if isinstance(event, RunStartEvent):
            runs.append((str(event.task or ""), None))
        elif isinstance(event, StopEvent):
            task = runs.pop()[0] if runs else ""  # (a run cut before its run_start)
            runs.append((task, event))
    if not runs:
        runs.append(("", None))
    return [
        _run(
            n,
            task,
            stop,
            [s for s in steps if s.run == n - 1],
            [c.summary_usage for c in compactions if c.run == n - 1 and c.summary_usage],
        )
        for n, (task, stop) in enumerate(runs, 1)
    ]


def _run(
    number: int,
    task: str,
    stop: StopEvent | None,
    steps: Sequence[StepUsage],
    summaries: Sequence[Usage],
) -> RunUsage:
    return RunUsage(
        number=number,
        task=task,
        stop_reason=None if stop is None else stop.stop_reason or "?",
        forced=stop is not None and stop.forced,
        calls=len(steps),
        usage=sum((s.usage for s in steps), sum(summaries, Usage())),
    )
