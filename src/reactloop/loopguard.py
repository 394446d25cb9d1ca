"""Loop detection: repeated identical calls and A→B→A→B ping-pong.

A call is identified by its tool name and canonical arguments (JSON with sorted keys). The
n-th identical call (``Limits.repeat_warn``) is not run: the model gets a warning with the
earlier result instead; ``Limits.repeat_stop`` ends the run. A call with side effects may
change what later calls see, so it forgets the record of every other call. Alternating
between two calls is caught by counting A→B cycles, whatever the side effects.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Literal

from reactloop.jsonfast import canonical
from reactloop.limits import Limits
from reactloop.messages import ToolCall

Action = Literal["run", "warn", "stop"]
_SEVERITY = {"run": 0, "warn": 1, "stop": 2}
_RESULT_PREVIEW = 300


@dataclass(frozen=True, kw_only=True, slots=True)
class Verdict:
    action: Action
    key: str
    kind: str = ""
    message: str = ""


def canonical_key(call: ToolCall) -> str:
    text = call.arguments.strip()
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return f"{call.name}\x00{text}"
    return f"{call.name}\x00{canonical(value)}"


class LoopGuard:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._counts: dict[str, int] = {}
        self._results: dict[str, str] = {}
        self._recent: deque[str] = deque(maxlen=2 * limits.pingpong_stop)

    def check(self, call: ToolCall) -> Verdict:
        """Judge a proposed call before it runs, and remember that it was proposed."""
        key = canonical_key(call)
        count = self._counts.get(key, 0) + 1
        self._counts[key] = count
        self._recent.append(key)
        repeat = self._repeat_verdict(call, key, count)
        pingpong = self._pingpong_verdict(call, key)
        return repeat if _SEVERITY[repeat.action] >= _SEVERITY[pingpong.action] else pingpong

    def record(self, key: str, content: str, *, side_effects: bool) -> None:
        """Remember what an executed call (``Verdict.key``) returned."""
        if side_effects:
            count = self._counts.get(key, 1)
            self._counts = {key: count}
            self._results.clear()
        self._results[key] = content

    def _repeat_verdict(self, call: ToolCall, key: str, count: int) -> Verdict:
        if count >= self.limits.repeat_stop:
            return Verdict(
                action="stop",
                key=key,
                kind="repeat",
                message=f"{call.name} was called {count} times with the same arguments",
            )
        if count >= self.limits.repeat_warn:
            previous = self._results.get(key, "(not run)")
            if len(previous) > _RESULT_PREVIEW:
                previous = previous[:_RESULT_PREVIEW] + "…"
            return Verdict(
                action="warn",
                key=key,
                kind="repeat",
                message=(
                    f"you already called {call.name} with these arguments; the result was: "
                    f"{previous}. Calling it again will not change it: try something else, "
                    "or answer with what you have"
                ),
            )
        return Verdict(action="run", key=key)

    def _pingpong_verdict(self, call: ToolCall, key: str) -> Verdict:
        cycles = self._alternating_cycles()
        if cycles >= self.limits.pingpong_stop:
            return Verdict(
                action="stop",
                key=key,
                kind="pingpong",
                message=f"the calls alternated between the same two actions {cycles} times",
            )
        if cycles >= self.limits.pingpong_warn:
            return Verdict(
                action="warn",
                key=key,
                kind="pingpong",
                message=(
                    f"you keep alternating between the same two calls ({call.name} is one); "
                    "this is a loop: try a different approach, or answer with what you have"
                ),
            )
        return Verdict(action="run", key=key)

    def _alternating_cycles(self) -> int:
        recent = list(self._recent)
        if len(recent) < 4 or recent[-1] == recent[-2]:
            return 0
        first, second = recent[-2], recent[-1]
        length = 0
        for offset, key in enumerate(reversed(recent)):
            if key != (second if offset % 2 == 0 else first):
                break
            length += 1
        return length // 2
