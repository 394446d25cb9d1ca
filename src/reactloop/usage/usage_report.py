"""``usage_report``: the accounting of one journal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import RunStartEvent
from reactloop.journal.writer import read_journal
from reactloop.messages import Usage
from reactloop.usage.children import ChildUsage, child_usages
from reactloop.usage.compaction_cost import CompactionCost, compaction_costs
from reactloop.usage.costmodel import CostModel, fit_cost_model
from reactloop.usage.prefix import PrefixIssue, check_prefix
from reactloop.usage.prices import PriceTable
from reactloop.usage.runs import RunUsage, run_usages
from reactloop.usage.steps import CHARS_PER_TOKEN, StepUsage, estimated_step_usages, step_usages


@dataclass(frozen=True, kw_only=True)
class UsageReport:
    """``steps``: one per model turn; ``total`` adds the compactions' summarising calls, which
    are not steps (``compactions`` has each one's tokens and cache cost). ``runs``: the runs
    of the journal, one per turn of a ``reactloop chat`` journal, each with its own tokens.
    ``children``: the sub-agents its runs called (``usage/children.py``); ``tree_total`` adds
    their tokens to ``total``, and ``money`` prices the tree's (at this journal's price)."""

    model: str
    steps: tuple[StepUsage, ...]
    total: Usage
    estimated: bool
    cost_model: CostModel | None
    prefix_issues: tuple[PrefixIssue, ...] = ()
    price_name: str | None = None
    money: float | None = None
    compactions: tuple[CompactionCost, ...] = ()
    runs: tuple[RunUsage, ...] = ()
    children: tuple[ChildUsage, ...] = ()

    @property
    def tree_total(self) -> Usage:
        """``total`` and the sub-agents' tokens (each child's include its own children's)."""
        return sum((child.usage for child in self.children), self.total)

    @property
    def complete(self) -> bool:
        """False when a run of the journal has no ``stop``: it was interrupted, and the
        accounting covers only what it recorded."""
        return all(not run.interrupted for run in self.runs)

    def incomplete_line(self) -> str | None:
        """What to say of an interrupted journal (None when every run has its ``stop``)."""
        cut = [run.number for run in self.runs if run.interrupted]
        if not cut:
            return None
        which = "" if len(self.runs) == 1 else f" (turn {', '.join(map(str, cut))})"
        return (
            f"incomplete: the journal has no stop event{which}: the run was interrupted; "
            "these are the tokens it recorded"
        )

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

    def call_rows(self) -> list[tuple[str, int, int, Usage]]:
        """``(label, run, step, usage)`` of every call (``run`` from 1): the model turns by
        number, then each compaction's summarising call (``summary``)."""
        rows = [(str(n), s.run + 1, s.step, s.usage) for n, s in enumerate(self.steps, 1)]
        rows += [
            ("summary", c.run + 1, c.step, c.summary_usage)
            for c in self.compactions
            if c.summary_usage
        ]
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
            "runs": [run.to_dict() for run in self.runs],
            "children": [child.to_dict() for child in self.children],
            "tree_total": self.tree_total.to_dict(),
        }


def usage_report(source: str | Path | Records, *, prices: PriceTable | None = None) -> UsageReport:
    """Accounting of one journal (a path, or its events: typed or its lines)."""
    lines = read_journal(source) if isinstance(source, str | Path) else source
    events = list(readable_events(lines))
    start = next((e for e in events if isinstance(e, RunStartEvent)), RunStartEvent())
    model = str(start.model or "")
    steps = step_usages(events)
    estimated = bool(steps) and all(s.usage.total_tokens == 0 for s in steps)
    if estimated:
        steps = estimated_step_usages(events)
    found = prices.lookup(model) if prices is not None and model else None
    compactions = compaction_costs(events, found[1] if found is not None else None)
    summaries = [c.summary_usage for c in compactions if c.summary_usage is not None]
    total = sum((s.usage for s in steps), sum(summaries, Usage()))
    children = tuple(child_usages(events))
    price_name, money = None, None
    if found is not None:
        tree_total = sum((child.usage for child in children), total)
        price_name, money = found[0], found[1].cost(tree_total)
    return UsageReport(
        model=model,
        steps=tuple(steps),
        total=total,
        estimated=estimated,
        cost_model=fit_cost_model(
            [s.usage.input_tokens for s in steps],
            without_tools=[s.without_tools for s in steps],
            schema_tokens=_schema_tokens(start),
        ),
        prefix_issues=tuple(check_prefix(events)),
        price_name=price_name,
        money=money,
        compactions=tuple(compactions),
        runs=tuple(run_usages(events, steps, compactions)),
        children=children,
    )


def _schema_tokens(start: RunStartEvent) -> float | None:
    """The tool schemas' size in tokens, estimated from their text in ``run_start``."""
    tools = start.tools
    if not isinstance(tools, list) or not tools:
        return None
    text = json.dumps(tools, ensure_ascii=False, default=str)
    return len(text) / CHARS_PER_TOKEN
