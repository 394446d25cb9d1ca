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
    def __init__(self, warn: int, stop: int) -> None:
        self.warn_at, self.stop_at = warn, stop
        self._name = ""
        self._arguments: dict[str, Any] | None = None
        self._keys: set[str] = set()  # the calls of the current streak
        self._calls = 0  # near repeats in a row since the results last changed
        self._result: str | frozenset[int] | None = None  # the result they all brought
        self._evidence: list[str] = []

    def check(self, name: str, arguments: dict[str, Any] | None, key: str) -> NearVerdict | None:
        """Count a proposed call; a verdict when it is one near repeat too many."""
        previous = self._arguments
        if name == self._name and previous is not None and arguments is not None:
            same = previous.keys() == arguments.keys() and _alike(previous, arguments)
        else:
            same = False
        self._name, self._arguments = name, arguments
        if not same:
            self._keys.clear()
            self._calls, self._result = 0, None
            self._evidence.clear()
        self._calls += 1
        self._keys.add(key)
        self._evidence.append(key.partition("\x00")[2][:300])
        del self._evidence[:-_EVIDENCE]
        if self._calls < self.warn_at:
            return None
        return self._verdict(name)

    def record(self, key: str, content: str, *, side_effects: bool) -> None:
        """What a call of the streak returned: the same as before, or something new."""
        if key not in self._keys:
            return
        if side_effects and not content.startswith('{"ok": false'):
            self._restart()
            return
        digest = _digest(content)
        if self._result is None:
            self._result = digest
        elif not _same_result(digest, self._result):
            self._result = digest
            self._restart()

    def _restart(self) -> None:
        self._calls = 1
        del self._evidence[:-1]

    def _verdict(self, name: str) -> NearVerdict:
        evidence = {
            "tool": name,
            "arguments": list(self._evidence),
            "why": (
                f"{self._calls} calls in a row of {name} whose arguments differ only in "
                "numbers or a few words, and whose results are the same"
            ),
        }
        if self._calls >= self.stop_at:
            message = f"{name} was called {self._calls} times with slightly different arguments"
            return NearVerdict("stop", self._calls, message + " and the same result", evidence)
        message = (
            f"the last {self._calls - 1} calls of {name} differed only slightly and brought "
            "nothing new (the same result each time). Changing a number or rewording the "
            "arguments again will not help: try another tool or approach, or answer with what "
            "you have"
        )
        return NearVerdict("warn", self._calls, message, evidence)


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


def _digest(content: str) -> str | frozenset[int]:
    text = _SPACE.sub(" ", content.lower()).strip()
    if len(text) <= _SHORT:
        return text
    words = text.split(" ")
    return frozenset(hash((words[i], words[i + 1], words[i + 2])) for i in range(len(words) - 2))


def _same_result(a: str | frozenset[int], b: str | frozenset[int]) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= RESULTS_ALIKE
