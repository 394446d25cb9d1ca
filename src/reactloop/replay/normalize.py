"""What a replay does not count as a difference: output that changes from run to run by itself.

A tool's result is compared after each of its strings went through a ``Normalizer``: first the
workspace's paths (the recorded one and the replay's) become ``<workspace>``, then each rule of
``DEFAULT_RULES`` (durations, temporary paths, process ids, object addresses), then the
user's own patterns (``--normalize REGEX``: each match becomes ``<normalized>``). The report
still shows what the tools really returned; only the comparison, and the first difference it
prints, see the normalised text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reactloop.errors import UsageError

USER_REPLACEMENT = "<normalized>"


@dataclass(frozen=True)
class Rule:
    """A pattern (ASCII digits and word boundaries: ``_rule``) and what a match becomes."""

    name: str
    pattern: re.Pattern[str]
    replacement: str

    def apply(self, text: str) -> str:
        return self.pattern.sub(self.replacement, text)


def _rule(name: str, pattern: str, replacement: str) -> Rule:
    return Rule(name, re.compile(pattern, re.ASCII), replacement)


_UNITS = r"(?:ns|us|µs|ms|s|sec|secs|seconds)"
_BASH_REPORTS = r"(?:Killed|Terminated|Aborted|Segmentation fault|Bus error|Hangup|Quit)"

DEFAULT_RULES = (
    # pytest's "in 0.12s" (and "in 62.34s (0:01:02)"), unittest's "in 0.001s", "12.5 ms"
    _rule("duration", rf"\b\d+\.\d+ ?{_UNITS}\b(?: \(\d+:\d\d:\d\d(?:\.\d+)?\))?", "<duration>"),
    _rule("duration", r"\b\d+m\d+\.\d+s\b", "<duration>"),  # bash's time: 0m0.003s
    # /tmp/pytest-of-root/pytest-3/x, /var/folders/… (macOS): up to a space, quote or bracket
    _rule(
        "temporary path",
        r"(?<![\w./-])/(?:private/)?(?:tmp|var/tmp|var/folders)(?=/|\b)[^\s'\"`:,;()\[\]{}<>|]*",
        "<tmp>",
    ),
    _rule("pid", r"\b(pid|PID|Pid)([ =:#]*)\d+\b", r"\1\2<pid>"),
    _rule("pid", r"/proc/\d+\b", "/proc/<pid>"),
    _rule("pid", rf"(: +)\d+( +{_BASH_REPORTS})", r"\1<pid>\2"),  # line 1: 42 Killed
    _rule("object address", r"\bat 0x[0-9a-fA-F]+\b", "at 0x<address>"),
)


class Normalizer:
    """Applies the workspace paths, the default rules and the user's patterns, in that order.

    ``patterns``: regular expressions (raises ``UsageError`` for one that does not compile);
    ``workspaces``: the folders whose path becomes ``<workspace>``; ``defaults=False`` leaves
    out ``DEFAULT_RULES``.
    """

    def __init__(
        self,
        patterns: Iterable[str] = (),
        *,
        workspaces: Iterable[str] = (),
        defaults: bool = True,
    ) -> None:
        user = tuple(Rule("user", compile_pattern(p), USER_REPLACEMENT) for p in patterns)
        self.rules: tuple[Rule, ...] = (DEFAULT_RULES if defaults else ()) + user
        self.workspaces = tuple(sorted({w for w in workspaces if len(w) > 1}, key=len)[::-1])
        self._paths = _paths_pattern(self.workspaces)

    def with_workspaces(self, *paths: str) -> Normalizer:
        copy = Normalizer(defaults=False, workspaces=(*self.workspaces, *paths))
        copy.rules = self.rules
        return copy

    def text(self, text: str) -> str:
        if self._paths is not None:
            text = self._paths.sub("<workspace>", text)
        for rule in self.rules:
            text = rule.apply(text)
        return text

    def value(self, value: Any) -> Any:
        """``value`` with every string in it normalised (keys of objects are left alone)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


def _paths_pattern(paths: tuple[str, ...]) -> re.Pattern[str] | None:
    """The paths, longest first, each where it is a whole path (``/w`` is not in ``/work``)."""
    if not paths:
        return None
    return re.compile("(?:" + "|".join(map(re.escape, paths)) + r")(?![\w-]|\.\w)")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"--normalize {pattern!r} is not a regular expression: {exc}") from None
