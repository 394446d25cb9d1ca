"""``usage_report``: the accounting of one journal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.journal import read_journal
from reactloop.messages import Usage
from reactloop.usage.compaction_cost import CompactionCost, compaction_costs
from reactloop.usage.costmodel import CostModel, fit_cost_model
from reactloop.usage.prefix import PrefixIssue, check_prefix
from reactloop.usage.prices import PriceTable
from reactloop.usage.steps import StepUsage, estimated_step_usages, step_usages


@dataclass(frozen=True, kw_only=True)
class UsageReport:
    """``steps``: one per model turn; ``total`` adds the compactions' summarising calls, which
    are not steps (``compactions`` has each one's tokens and cache cost). ``complete`` is False
    for a journal whose run (or last run) has no ``stop`` event: it was interrupted, and the
    accounting covers only what it holds."""

    model: str
    steps: tuple[StepUsage, ...]
    total: Usage
    estimated: bool
    cost_model: CostModel | None
    prefix_issues: tuple[PrefixIssue, ...] = ()
    price_name: str | None = None
    money: float | None = None
    compactions: tuple[CompactionCost, ...] = ()
    complete: bool = True

    @property
    def cache_written(self) -> bool:
        """Whether any call wrote to a prompt cache (Anthropic's ``cache_creation_input_tokens``).
        Only then do tables get a cache-write column: other providers report no writes."""
        return self.total.cache_write_tokens > 0

    def count_columns(self) -> tuple[str, ...]:
        """The names of the token counts a table shows for each call (``counts``)."""
        written = ("cache write",) if self.cache_written else ()
        return ("input", "cached", *written, "output", "reasoning")

    def counts(self, usage: Usage) -> tuple[int, ...]:
        """The counts of ``usage`` in the order of ``count_columns``."""
        written = (usage.cache_write_tokens,) if self.cache_written else ()
        return (
            usage.input_tokens,
            usage.cached_tokens,
            *written,
            usage.output_tokens,
            usage.reasoning_tokens,
        )

    def call_rows(self) -> list[tuple[str, int, Usage]]:
        """``(label, step, usage)`` of every call: the model turns by number, then each
        compaction's summarising call (``summary``)."""
        rows = [(str(number), s.step, s.usage) for number, s in enumerate(self.steps, 1)]
        rows += [("summary", c.step, c.summary_usage) for c in self.compactions if c.summary_usage]
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "estimated": self.estimated,
            "steps": [{"step": s.step, **s.usage.to_dict()} for s in self.steps],
            "total": self.total.to_dict(),
            "cost_model": self.cost_model.to_dict() if self.cost_model else None,
            "price": self.price_name,
            "money": self.money,
            "prefix_issues": [issue.to_dict() for issue in self.prefix_issues],
            "compactions": [c.to_dict() for c in self.compactions],
            "complete": self.complete,
        }


def usage_report(
    source: str | Path | Sequence[Mapping[str, Any]], *, prices: PriceTable | None = None
) -> UsageReport:
    """Accounting of one journal (a path or its events)."""
    events = read_journal(source) if isinstance(source, str | Path) else list(source)
    start = next((e for e in events if e.get("type") == "run_start"), {})
    model = str(start.get("model") or "")
    steps = step_usages(events)
    estimated = bool(steps) and all(s.usage.total_tokens == 0 for s in steps)
    if estimated:
        steps = estimated_step_usages(events)
    found = prices.lookup(model) if prices is not None and model else None
    compactions = compaction_costs(events, found[1] if found is not None else None)
    summaries = [c.summary_usage for c in compactions if c.summary_usage is not None]
    total = sum((s.usage for s in steps), sum(summaries, Usage()))
    price_name, money = None, None
    if found is not None:
        price_name, money = found[0], found[1].cost(total)
    return UsageReport(
        model=model,
        steps=tuple(steps),
        total=total,
        estimated=estimated,
        cost_model=fit_cost_model([s.usage.input_tokens for s in steps]),
        prefix_issues=tuple(check_prefix(events)),
        price_name=price_name,
        money=money,
        compactions=tuple(compactions),
        complete=is_complete(events),
    )


def is_complete(events: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every run of the journal ended with its ``stop`` (a chat holds several)."""
    open_run = False
    for event in events:
        kind = event.get("type")
        if kind == "run_start":
            if open_run:
                return False
            open_run = True
        elif kind == "stop":
            open_run = False
    return not open_run and any(e.get("type") == "stop" for e in events)
