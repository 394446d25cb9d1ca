"""Loop detection: repeated identical calls and A→B→A→B ping-pong.

A call is identified by its tool name and canonical arguments (JSON with sorted keys). The
n-th identical call (``Limits.repeat_warn``) is not run: the model gets a warning with the
earlier result instead; ``Limits.repeat_stop`` ends the run. A call with side effects may
change what later calls see, so it forgets the record of every other call. Alternating
between two calls is caught by counting A→B cycles, whatever the side effects.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NamedTuple

from reactloop.jsonfast import canonical
from reactloop.limits import Limits
from reactloop.messages import ToolCall

Action = Literal["run", "warn", "stop"]
_SEVERITY = {"run": 0, "warn": 1, "stop": 2}
_RESULT_PREVIEW = 300


class Verdict(NamedTuple):  # a tuple: built for every call, so built cheaply
    action: Action
    key: str
    kind: str = ""
    message: str = ""


def canonical_key(call: ToolCall, parsed: dict[str, Any] | None = None) -> str:
    """Tool name and arguments in one spelling; ``parsed`` saves decoding them again."""
    if parsed is None:
        text = call.arguments.strip()
        try:
            parsed = json.loads(text) if text else {}
        except json.JSONDecodeError:
            return f"{call.name}\x00{text}"
    return f"{call.name}\x00{canonical(parsed)}"


class LoopGuard:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._counts: dict[str, int] = {}
        self._results: dict[str, str] = {}
        self._last: tuple[str, str] = ("", "")
        self._alternating = 0  # length of the A,B,A,B,... run that ends with the last call

    def check(self, call: ToolCall, parsed: dict[str, Any] | None = None) -> Verdict:
        """Judge a proposed call before it runs, and remember that it was proposed."""
        key = canonical_key(call, parsed)
        count = self._counts.get(key, 0) + 1
        self._counts[key] = count
        self._track_alternation(key)
        if count < self.limits.repeat_warn and self._alternating < 4:
            return Verdict(action="run", key=key)  # the common case, decided cheaply
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
            return Verdict(
                action="warn",
                key=key,
                kind="repeat",
                message=(
                    f"you already called {call.name} with these arguments; "
                    f"{self._earlier_result(key)}. Calling it again will not change it: "
                    "try something else, or answer with what you have"
                ),
            )
        return Verdict(action="run", key=key)

    def _earlier_result(self, key: str) -> str:
        previous = self._results.get(key)
        if previous is None:  # refused, or running in this same turn
            return "see the result of that call"
        if len(previous) > _RESULT_PREVIEW:
            previous = previous[:_RESULT_PREVIEW] + "…"
        return f"the result was: {previous}"

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

    def _track_alternation(self, key: str) -> None:
        before_last, last = self._last
        if key == last:
            self._alternating = 1
        elif key == before_last and self._alternating >= 2:
            self._alternating += 1
        else:
            self._alternating = 2 if last else 1
        self._last = (last, key)

    def _alternating_cycles(self) -> int:
        return self._alternating // 2 if self._alternating >= 4 else 0
