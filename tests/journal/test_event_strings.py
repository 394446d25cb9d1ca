"""No module outside ``journal/`` should compare an event's type or a warning's kind with a
string: the readers take the typed events (``journal/schema.py``). The modules that still do
are listed below with how many such lines each holds; the list only shrinks. A new offender,
or more lines in a listed one, fails; so does a listed count that fell (lower it here)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "reactloop"
# The journal's readers (the wire adapters compare their own providers' "type"s, not events').
READERS = (
    "agent.py",
    "conversation.py",
    "cli/",
    "eval/",
    "loop/",
    "models/replay.py",
    "replay/",
    "resume/",
    "usage/",
    "viewer/",
)
_KINDS = "|".join(
    (
        "repeat|near_repeat|pingpong|cycle|wind_down|truncated|format_error|empty_reply",
        "not_executed|declined|deferred|budget|prefix_changed|model_error|internal_error",
        "tool_timeout|invalid_output|verify_failed|compaction_failed|silent_truncation",
    )
)
PATTERN = re.compile(
    r"""\[["'](?:type|kind)["']\]"""  # event["type"], event["kind"]
    r"""|\.get\(["'](?:type|kind)["']"""  # event.get("type"), event.get("kind")
    r"""|(?<![.\w])(?:kind|event_type)\s*(?:==|!=|not in|in)\s*["({A-Z_]"""  # kind == "stop"
    rf"""|\.kind\s*(?:==|!=)\s*["'](?:{_KINDS})["']"""  # warning.kind == "wind_down"
)

# Today's offenders and their lines: lower a count (or drop a row) as a reader moves over.
ALLOWED: dict[str, int] = {}


def _offenders() -> Counter[str]:
    found: Counter[str] = Counter()
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if not name.startswith(READERS):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if PATTERN.search(line) and not line.lstrip().startswith("#"):
                found[name] += 1
    return found


def test_no_new_reader_compares_event_strings() -> None:
    found = _offenders()
    grown = {n: (c, ALLOWED.get(n, 0)) for n, c in found.items() if c > ALLOWED.get(n, 0)}
    assert not grown, f"compares an event's type or kind with a string (found, allowed): {grown}"


def test_the_allow_list_only_shrinks() -> None:
    found = _offenders()
    fell = {n: (found.get(n, 0), c) for n, c in ALLOWED.items() if found.get(n, 0) < c}
    assert not fell, f"fewer offenders than allowed (found, allowed): lower ALLOWED: {fell}"


def test_the_pattern_finds_what_it_is_for() -> None:
    hits = [
        'if event["type"] == "stop":',
        'kind = event.get("type")',
        'elif kind == "turn":',
        'if warning.kind == "wind_down":',
        "if kind in _DONE_POINTS:",
    ]
    misses = ['if message.kind == "task":', "if isinstance(event, StopEvent):"]
    assert all(PATTERN.search(line) for line in hits)
    assert not any(PATTERN.search(line) for line in misses)
