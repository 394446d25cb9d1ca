"""Near-repeat loops: one tool called again and again with arguments that differ only slightly
(a changed page number, a rephrased query) while its results bring nothing new.

Two calls are near repeats when they name the same tool with the same argument names and every
value that differs is a number, or text whose words (lowercase, digits as ``#``) mostly agree
(``WORDS_ALIKE``). Two results bring nothing new when their text is the same (case and spacing
aside) or, for long ones, when nine in ten of their three-word runs are shared. A result of a
tool with side effects counts only when it is a failure: writing different files, each
answered ``ok``, is work, not a loop. ``NearRepeats`` counts the near repeats in a row since the
results last changed; ``Limits.near_repeat_warn`` of them warns, ``near_repeat_stop`` stops.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

WORDS_ALIKE = 0.4  # Jaccard index of the word sets of two texts that count as one
RESULTS_ALIKE = 0.9  # of the three-word runs of two long results that bring nothing new
_SHORT = 256  # results up to this length must be the same text
_EVIDENCE = 8  # calls kept as evidence for the journal
_WORD = re.compile(r"[^\W\d_]+|\d+")
_SPACE = re.compile(r"\s+")


class NearVerdict(NamedTuple):
    action: str  # "warn" or "stop"
    calls: int
    message: str
    evidence: dict[str, Any]


class NearRepeats:
    """The streak: calls of one tool, each a near repeat of the one before, that brought the
    same result. Arguments are compared only when a result is the same as the streak's (work
    whose results differ costs a string comparison a call)."""

    def __init__(self, warn: int, stop: int) -> None:
        self.warn_at, self.stop_at = warn, stop
        self._name = ""
        self._arguments: dict[str, Any] | None = None  # of the streak's latest call
        self._content = ""  # the result they all brought, as sent
        self._digest: frozenset[int] | None = None  # its three-word runs, when it is long
        self._streak: list[str] = []  # the keys of its calls, the evidence for the journal
        self.count = 0  # calls in the streak, the refused ones (warned, not run) too

    def check(self, name: str, arguments: dict[str, Any] | None, key: str) -> NearVerdict | None:
        """A verdict when this call would be one near repeat too many (the caller asks only
        once ``count + 1`` reaches ``warn_at``)."""
        calls = self.count + 1
        if calls < self.warn_at or not self._continues(name, arguments):
            return None
        self._add(key)
        return self._verdict(name, calls)

    def record(
        self, key: str, content: str, side_effects: bool, call: tuple[str, dict[str, Any] | None]
    ) -> None:
        """What a call (its tool name and arguments) returned: the streak goes on (a near
        repeat, the same result), or a new one starts with this call. On every call's path:
        the common case, a result unlike the streak's, is a string comparison."""
        name, arguments = call
        if side_effects and not content.startswith('{"ok": false'):
            name, arguments, content = "", None, ""  # work done: nothing to compare with
        elif (
            content == self._content or (len(content) > _SHORT and self._same_long(content))
        ) and self._continues(name, arguments):
            self._arguments = arguments
            self._add(key)
            return
        self._name, self._arguments = name, arguments
        self._content, self._digest = content, None
        self._streak = [key]
        self.count = 1

    def _add(self, key: str) -> None:
        self.count += 1
        self._streak.append(key)
        if len(self._streak) > 4 * _EVIDENCE:
            del self._streak[:-_EVIDENCE]

    def _continues(self, name: str, arguments: dict[str, Any] | None) -> bool:
        previous = self._arguments
        return (
            name == self._name
            and previous is not None
            and arguments is not None
            and previous.keys() == arguments.keys()
            and _alike(previous, arguments)
        )

    def _same_long(self, content: str) -> bool:
        """Whether two long results share nine in ten of their three-word runs."""
        if len(content) <= _SHORT or len(self._content) <= _SHORT:
            return False
        if self._digest is None:
            self._digest = _shingles(self._content)
        return _same_result(_shingles(content), self._digest)

    def _verdict(self, name: str, calls: int) -> NearVerdict:
        keys = self._streak[-calls:]
        evidence = {
            "tool": name,
            "arguments": [k.partition("\x00")[2][:300] for k in keys],
            "why": (
                f"{calls} calls in a row of {name} whose arguments differ only in numbers or "
                "a few words, and whose results are the same"
            ),
        }
        if calls >= self.stop_at:
            message = f"{name} was called {calls} times with slightly different arguments"
            return NearVerdict("stop", calls, message + " and the same result", evidence)
        message = (
            f"the last {calls - 1} calls of {name} differed only slightly and brought nothing "
            "new (the same result each time). Changing a number or rewording the arguments "
            "again will not help: try another tool or approach, or answer with what you have"
        )
        return NearVerdict("warn", calls, message, evidence)


def _alike(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for name, value in a.items():
        other = b[name]
        if value == other:
            continue
        if _number(value) and _number(other):
            continue
        if isinstance(value, str) and isinstance(other, str):
            if words_alike(value, other):
                continue
            return False
        return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def words_alike(a: str, b: str) -> bool:
    """Whether two texts share most of their words (lowercase; every number counts as one)."""
    first, second = _words(a), _words(b)
    if not first or not second:
        return first == second
    return len(first & second) / len(first | second) >= WORDS_ALIKE


def _words(text: str) -> set[str]:
    return {"#" if word[0].isdigit() else word for word in _WORD.findall(text.lower())}


def _shingles(content: str) -> frozenset[int]:
    words = _SPACE.sub(" ", content.lower()).strip().split(" ")
    return frozenset(hash((words[i], words[i + 1], words[i + 2])) for i in range(len(words) - 2))


def _same_result(a: frozenset[int], b: frozenset[int]) -> bool:
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= RESULTS_ALIKE
