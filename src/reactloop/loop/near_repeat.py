"""Near-repeat loops, worded: the verdict on a call that is one near repeat too many (one tool
called again and again with arguments that differ only slightly while its results bring
nothing new), with the evidence the journal keeps. What counts as a near repeat, and the
streak of them, are the guard's memory: ``journal/near_streak.py`` (``words_alike`` too).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from reactloop.journal.near_streak import NearStreak, words_alike

__all__ = ["NearVerdict", "near_verdict", "words_alike"]


class NearVerdict(NamedTuple):
    action: str  # "warn" or "stop"
    calls: int
    message: str
    evidence: dict[str, Any]


def near_verdict(streak: NearStreak, name: str, calls: int, stop_at: int) -> NearVerdict:
    """The verdict on the ``calls``-th near repeat in a row of ``name`` (``streak``'s last)."""
    keys = streak.keys[-calls:]
    evidence = {
        "tool": name,
        "arguments": [k.partition("\x00")[2][:300] for k in keys],
        "why": (
            f"{calls} calls in a row of {name} whose arguments differ only in numbers or "
            "a few words, and whose results are the same"
        ),
    }
    if calls >= stop_at:
        message = f"{name} was called {calls} times with slightly different arguments"
        return NearVerdict("stop", calls, message + " and the same result", evidence)
    message = (
        f"the last {calls - 1} calls of {name} differed only slightly and brought nothing "
        "new (the same result each time). Changing a number or rewording the arguments "
        "again will not help: try another tool or approach, or answer with what you have"
    )
    return NearVerdict("warn", calls, message, evidence)
