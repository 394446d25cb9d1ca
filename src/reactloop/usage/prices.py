"""Money from a user's price table: dollars per million tokens, with cache read and write rates."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.messages import Usage
from reactloop.support.json_decode import json_number, read_json_file

PRICE_KEYS = ("input", "cached_input", "cache_write", "output")


@dataclass(frozen=True, kw_only=True)
class Price:
    """Dollars per million tokens; ``cached_input`` applies to the input read from a prompt
    cache, ``cache_write`` (None: the ``input`` rate) to the input written to it."""

    input: float
    output: float
    cached_input: float
    cache_write: float | None = None

    @classmethod
    def from_rates(cls, rates: Mapping[str, float]) -> Price:
        """The price of a rate table checked elsewhere (an evaluation rung's ``prices``): a
        missing ``input`` or ``output`` is free, a missing ``cached_input`` is the ``input``
        rate, a missing ``cache_write`` too."""
        rate_in = float(rates.get("input", 0.0))
        written = rates.get("cache_write")
        return cls(
            input=rate_in,
            output=float(rates.get("output", 0.0)),
            cached_input=float(rates.get("cached_input", rate_in)),
            cache_write=None if written is None else float(written),
        )

    def cost(self, usage: Usage) -> float:
        """Dollars for ``usage``: the input read from the cache at ``cached_input``, the input
        written to it at ``cache_write``, the rest of the input at ``input``, the output at
        ``output``."""
        cached = min(usage.cached_tokens, usage.input_tokens)
        written = min(usage.cache_write_tokens, usage.input_tokens - cached)
        fresh = usage.input_tokens - cached - written
        write_rate = self.input if self.cache_write is None else self.cache_write
        return (
            fresh * self.input
            + cached * self.cached_input
            + written * write_rate
            + usage.output_tokens * self.output
        ) / 1e6


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name. A key matches exactly, as a glob (``gpt-4o*``) or as a prefix.

    Lookup order: the exact name, the name without its ``provider:`` prefix, the longest
    matching glob, the longest matching prefix.
    """

    prices: Mapping[str, Price] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        data = read_json_file(path, "price table")
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "price table") -> PriceTable:
        if not isinstance(data, dict):
            raise UsageError(f"{source}: expected an object of model name -> prices")
        return cls(
            {str(name): _parse_price(source, str(name), entry) for name, entry in data.items()}
        )

    def lookup(self, model: str) -> tuple[str, Price] | None:
        for name in _candidate_names(model):
            if name in self.prices:
                return name, self.prices[name]
        globs = [k for k in self.prices if any(ch in k for ch in "*?[")]
        for name in _candidate_names(model):
            matches = sorted((k for k in globs if fnmatch.fnmatchcase(name, k)), key=len)
            if matches:
                return matches[-1], self.prices[matches[-1]]
        for name in _candidate_names(model):
            prefixes = sorted((k for k in self.prices if name.startswith(k)), key=len)
            if prefixes:
                return prefixes[-1], self.prices[prefixes[-1]]
        return None


def _candidate_names(model: str) -> list[str]:
    names = [model]
    _, colon, rest = model.partition(":")
    if colon and rest:
        names.append(rest)
    return names


def _parse_price(source: str, name: str, entry: Any) -> Price:
    where = f"{source}: model {name!r}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected {{'input': ..., 'cached_input': ..., 'output': ...}}")
    unknown = sorted(set(entry) - set(PRICE_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; keys are {', '.join(PRICE_KEYS)}")
    values: dict[str, float] = {}
    for key in PRICE_KEYS:
        value = entry.get(key)
        if value is None:
            continue
        dollars = json_number(value)
        if dollars is None or not math.isfinite(dollars):
            raise UsageError(f"{where}: {key} must be a number of dollars per million tokens")
        if dollars < 0:
            raise UsageError(f"{where}: {key} must not be negative")
        values[key] = dollars
    for key in ("input", "output"):
        if key not in values:
            raise UsageError(f"{where}: missing {key!r} (dollars per million tokens)")
    return Price(
        input=values["input"],
        output=values["output"],
        cached_input=values.get("cached_input", values["input"]),
        cache_write=values.get("cache_write"),
    )
