"""Counters that take numbers one at a time in constant (or 8 bytes a number) memory, for the
report's tables (``summary``)."""

from __future__ import annotations

import math
from array import array


class Mean:
    """``statistics.fmean`` of the values added, in constant memory: the exact partial sums of
    ``math.fsum`` (Shewchuk), so the mean is the one fmean gives, bit for bit."""

    __slots__ = ("_partials", "count")

    def __init__(self) -> None:
        self.count = 0
        self._partials: list[float] = []

    def add(self, value: float) -> None:
        x = float(value)
        kept = 0
        for y in self._partials:
            if abs(x) < abs(y):
                x, y = y, x
            high = x + y
            low = y - (high - x)
            if low:
                self._partials[kept] = low
                kept += 1
            x = high
        self._partials[kept:] = [x]
        self.count += 1

    def value(self) -> float | None:
        return math.fsum(self._partials) / self.count if self.count else None


class Values:
    """Numbers kept for a percentile or an in-order ``sum``: 8 bytes each while they are floats
    (the rare other number moves them to a list, so that nothing is converted)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: array[float] | list[float] = array("d")

    def add(self, value: float) -> None:
        if isinstance(self.items, array) and type(value) is not float:
            self.items = list(self.items)
        self.items.append(value)
