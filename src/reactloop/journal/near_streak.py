"""``NearStreak``: the loop guard's memory of near repeats (``loop/near_repeat.py`` words its
verdicts), part of its ``GuardState`` (``guard_state.py``): one tool called again and again
with arguments that differ only slightly (a changed page number, a rephrased query) while its
results bring nothing new.

Two calls are near repeats when they name the same tool with the same argument names and every
value that differs is a number, or text whose words (lowercase, digits as ``#``) mostly agree
(``WORDS_ALIKE``). Two results bring nothing new when their text is the same (case and spacing
aside) or, for long ones, when nine in ten of their three-word runs are shared. A result of a
tool with side effects counts only when it is a failure: writing different files, each
answered ``ok``, is work, not a loop. The streak counts the near repeats in a row since the
results last changed; ``Limits.near_repeat_warn`` of them warns, ``near_repeat_stop`` stops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

WORDS_ALIKE = 0.4  # Jaccard index of the word sets of two texts that count as one
RESULTS_ALIKE = 0.9  # of the three-word runs of two long results that bring nothing new
_SHORT = 256  # results up to this length must be the same text
_EVIDENCE = 8  # calls kept as evidence for the journal
_WORD = re.compile(r"[^\W\d_]+|\d+")
_SPACE = re.compile(r"\s+")


@dataclass(slots=True, kw_only=True)
class NearStreak:
    """Calls of one tool, each a near repeat of the one before, that brought the same result.
    Arguments are compared only when a result is the same as the streak's (work whose results
    differ costs a string comparison a call)."""

    name: str = ""
    arguments: dict[str, Any] | None = None  # of the streak's latest call
    content: str = ""  # the result they all brought, as sent
    digest: frozenset[int] | None = field(default=None, compare=False)  # its three-word runs
    keys: list[str] = field(default_factory=list)  # its calls', the evidence for the journal
    count: int = 0  # calls in the streak, the refused ones (warned, not run) too


def near_check(streak: NearStreak, name: str, arguments: dict[str, Any] | None, key: str) -> int:
    """A call judged once ``streak.count + 1`` reaches the warning's threshold (the caller
    asks only then): a near repeat of the streak's calls joins it, to be refused; the calls
    in the streak then, else 0."""
    if not _continues(streak, name, arguments):
        return 0
    _add(streak, key)
    return streak.count


def near_record(
    streak: NearStreak,
    key: str,
    content: str,
    side_effects: bool,
    call: tuple[str, dict[str, Any] | None],
) -> None:
    """What a call (its tool name and arguments) returned: the streak goes on (a near
    repeat, the same result), or a new one starts with this call. On every call's path:
    the common case, a result unlike the streak's, is a string comparison."""
    name, arguments = call
    if side_effects and not content.startswith('{"ok": false'):
        name, arguments, content = "", None, ""  # work done: nothing to compare with
    elif (
        content == streak.content or (len(content) > _SHORT and _same_long(streak, content))
    ) and _continues(streak, name, arguments):
        streak.arguments = arguments
        _add(streak, key)
        return
    streak.name, streak.arguments = name, arguments
    streak.content, streak.digest = content, None
    streak.keys = [key]
    streak.count = 1


def _add(streak: NearStreak, key: str) -> None:
    streak.count += 1
    keys = streak.keys
    keys.append(key)
    if len(keys) > 4 * _EVIDENCE:
        del keys[:-_EVIDENCE]


def _continues(streak: NearStreak, name: str, arguments: dict[str, Any] | None) -> bool:
    previous = streak.arguments
    return (
        name == streak.name
        and previous is not None
        and arguments is not None
        and previous.keys() == arguments.keys()
        and _alike(previous, arguments)
    )


def _same_long(streak: NearStreak, content: str) -> bool:
    """Whether two long results share nine in ten of their three-word runs."""
    if len(content) <= _SHORT or len(streak.content) <= _SHORT:
        return False
    if streak.digest is None:
        streak.digest = _shingles(streak.content)
    return _same_result(_shingles(content), streak.digest)


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
