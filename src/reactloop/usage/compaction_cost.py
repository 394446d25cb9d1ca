"""The cache cost of each context compaction, read from a journal's ``compaction`` events.

A compaction replaces one block of the history (docs/long_runs.md), so the next request
shares its prefix with the one before only up to the block's start: everything from there on
is read again without the provider's cache. Per compaction this reports the estimated prompt
before and after, the summarising call's own tokens (and money, with a price), and that miss:
the tokens the next call re-reads uncached (measured when the provider reports cached tokens,
else estimated from the journal) and what they cost beyond a cache hit (at the price's
``cache_write`` rate for what the provider reports written to its cache).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import Records, readable_events
from reactloop.journal.schema import CompactionEvent, RunStartEvent, TurnEvent
from reactloop.messages import Usage
from reactloop.usage.prices import Price
from reactloop.usage.steps import usage_from


@dataclass(frozen=True, kw_only=True)
class CompactionCost:
    """One compaction: ``step`` is the step it followed; token counts from the journal are
    estimates (about four characters a token), ``next_call`` is what the provider measured."""

    step: int
    policy: str
    start: int | None
    replaced: int | None
    tokens_before: int | None
    tokens_after: int | None
    rewritten_tokens: int | None  # the next prompt from the block's start on (estimated)
    summary_usage: Usage | None = None
    next_call: Usage | None = None
    measured_miss: int | None = None  # the next call's uncached input, when measured
    summary_money: float | None = None
    miss_money: float | None = None  # what the miss costs beyond reading it from the cache
    run: int = 0  # which run of the journal, from 0 (``reactloop chat``: one run per turn)

    @property
    def miss_tokens(self) -> int | None:
        """The tokens the next call read uncached: measured, else estimated."""
        return self.measured_miss if self.measured_miss is not None else self.rewritten_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "policy": self.policy,
            "start": self.start,
            "replaced": self.replaced,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "rewritten_tokens": self.rewritten_tokens,
            "summary_usage": self.summary_usage.to_dict() if self.summary_usage else None,
            "next_call": self.next_call.to_dict() if self.next_call else None,
            "measured_miss": self.measured_miss,
            "miss_tokens": self.miss_tokens,
            "summary_money": self.summary_money,
            "miss_money": self.miss_money,
        }

    def describe(self) -> list[str]:
        """The lines ``reactloop cost`` prints for this compaction."""
        what = f"{_n(self.replaced)} messages from message {_n(self.start)}"
        lines = [
            f"compaction after step {self.step} ({self.policy}): {what} replaced; prompt "
            f"~{_n(self.tokens_before)} → ~{_n(self.tokens_after)} tokens"
        ]
        if self.summary_usage is not None:
            u = self.summary_usage
            line = (
                f"  summary call: {u.input_tokens:,} input ({u.cached_tokens:,} cached), "
                f"{u.output_tokens:,} output"
            )
            if self.summary_money is not None:
                line += f", ${self.summary_money:.6f}"
            lines.append(line)
        lines.append("  " + self.miss_line())
        return lines

    def miss_line(self) -> str:
        """What the next call paid for the rewritten prefix, in one line."""
        if self.measured_miss is not None and self.next_call is not None:
            line = (
                f"next call: {self.measured_miss:,} of {self.next_call.input_tokens:,} input "
                f"tokens uncached (the rewritten prefix ~{_n(self.rewritten_tokens)})"
            )
        elif self.rewritten_tokens is not None:
            line = f"next call: ~{self.rewritten_tokens:,} tokens of rewritten prefix uncached"
        else:
            line = "next call: the rewritten prefix is read uncached"
        if self.miss_money is not None:
            line += f", ${self.miss_money:.6f} more than a cache hit"
        return line


def compaction_costs(events: Records, price: Price | None = None) -> list[CompactionCost]:
    """One ``CompactionCost`` per ``compaction`` event, in order."""
    typed = list(readable_events(events))
    cached_reported = any(
        usage_from(e.turn.get("usage")).cached_tokens for e in typed if isinstance(e, TurnEvent)
    )
    costs = []
    runs = 0
    for index, event in enumerate(typed):
        runs += isinstance(event, RunStartEvent)
        if not isinstance(event, CompactionEvent):
            continue
        next_call = _next_turn_usage(typed, index)
        cost = _cost(event, next_call, cached_reported, price)
        costs.append(dataclasses.replace(cost, run=max(runs - 1, 0)))
    return costs


def _cost(
    event: CompactionEvent, next_call: Usage | None, cached_reported: bool, price: Price | None
) -> CompactionCost:
    after, prefix = _count(event.given("tokens_after")), _count(event.given("prefix_tokens"))
    rewritten = after - prefix if after is not None and prefix is not None else None
    summary = event.summary_usage
    measured = None
    if cached_reported and next_call is not None and next_call.input_tokens:
        measured = next_call.input_tokens - min(next_call.cached_tokens, next_call.input_tokens)
    cost = CompactionCost(
        step=event.step,
        policy=event.policy or "?",
        start=_count(event.given("start")),
        replaced=_count(event.given("replaced")),
        tokens_before=_count(event.given("tokens_before")),
        tokens_after=after,
        rewritten_tokens=rewritten,
        summary_usage=usage_from(summary) if summary is not None else None,
        next_call=next_call,
        measured_miss=measured,
    )
    if price is None:
        return cost
    return _priced(cost, price)


def _priced(cost: CompactionCost, price: Price) -> CompactionCost:
    miss = cost.miss_tokens
    miss_money = None
    if miss is not None:  # read uncached (and written to the cache, when measured so)
        written = cost.next_call.cache_write_tokens if cost.next_call is not None else 0
        if cost.measured_miss is None:
            written = 0
        missed = price.cost(Usage(input_tokens=miss, cache_write_tokens=min(written, miss)))
        miss_money = missed - price.cost(Usage(input_tokens=miss, cached_tokens=miss))
    summary_money = price.cost(cost.summary_usage) if cost.summary_usage is not None else None
    return CompactionCost(
        **{**cost.__dict__, "summary_money": summary_money, "miss_money": miss_money}
    )


def _next_turn_usage(events: Sequence[JournalEvent], index: int) -> Usage | None:
    for event in events[index + 1 :]:
        if isinstance(event, TurnEvent):
            return usage_from(event.turn.get("usage"))
        if isinstance(event, CompactionEvent):
            return None  # another compaction before any call: that one's miss
    return None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _n(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"
