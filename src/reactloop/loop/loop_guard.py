"""Loop detection: repeated identical calls, A→B→A→B ping-pong and A→B→C→A→B→C cycles.

A call is identified by its tool name and canonical arguments (JSON with sorted keys). The
n-th identical call (``Limits.repeat_warn``) is not run: the model gets a warning with the
earlier result instead; ``Limits.repeat_stop`` ends the run. A call with side effects may
change what later calls see, so it forgets the record of every other call. Identical calls in
one turn of a tool with side effects that is not idempotent (two rolls of a die, two appends
of a line) are meant as two and count as one repeat (``start_turn`` marks the turns); those
of a read-only or idempotent tool, which cannot give anything new, are refused as repeats.
The warning says why by the case (``Effects``): the same result, nothing more done, or a step
not repeated by mistake. Going round the same two or three calls is caught by counting the
rounds in a row (``Limits.pingpong_warn``, ``Limits.pingpong_stop``), whatever the side
effects: editing a file back and forth between the same contents, or write → test → revert →
write → test → revert, is a loop too. The same tool called again and again with slightly
different arguments while its results bring nothing new is caught too (``near_repeat.py``;
``Limits.near_repeat_warn``, ``near_repeat_stop``).

The guard's memory is a ``GuardState`` (``journal/guard_state.py``), moved by the functions
the journal's fold moves its own with: a resumed run's guard is handed the fold's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from reactloop.journal.guard_state import Effects, GuardState, guard_check, guard_record, guard_turn
from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import Limits
from reactloop.loop.near_repeat import near_verdict
from reactloop.messages import ToolCall
from reactloop.support.json_decode import JSONRefused, safe_loads
from reactloop.support.json_encode import canonical

if TYPE_CHECKING:
    from reactloop.tools.base import Tool

Action = Literal["run", "warn", "stop"]
_SEVERITY = {"run": 0, "warn": 1, "stop": 2}
_RESULT_PREVIEW = 300


class Verdict(NamedTuple):  # a tuple: built for every call, so built cheaply
    action: Action
    key: str
    kind: WarningKind | Literal[""] = ""  # the warning it gives; "": a call that runs
    message: str = ""
    evidence: dict[str, Any] | None = None  # why the calls count as one (near repeats)


def effects_of(tool: Tool | None) -> Effects:
    """What calling ``tool`` again with the same arguments does (None: an unknown tool)."""
    if tool is not None and tool.read_only:
        return "none"
    return "idempotent" if tool is not None and tool.idempotent else "side"


def canonical_key(call: ToolCall, parsed: dict[str, Any] | None = None) -> str:
    """Tool name and arguments in one spelling; ``parsed`` saves decoding them again (in the
    loop, ``PreparedCall.key`` is this key, made when the call was prepared)."""
    if parsed is None:
        text = call.arguments.strip()
        try:
            parsed = safe_loads(text) if text else {}
        except JSONRefused:
            return f"{call.name}\x00{text}"
    return f"{call.name}\x00{canonical(parsed)}"


class LoopGuard:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.state = GuardState()  # its memory (a resumed run's: the fold's)
        self._near_warn = limits.near_repeat_warn if limits.near_repeat_stop is not None else None

    def start_turn(self) -> None:
        """The calls judged from now on are those of a new turn of the model."""
        guard_turn(self.state)

    def check(
        self,
        call: ToolCall,
        parsed: dict[str, Any] | None = None,
        *,
        key: str | None = None,
        effects: Effects = "side",
    ) -> Verdict:
        """Judge a proposed call before it runs, and remember that it was proposed. ``key``
        is the call's ``canonical_key`` when the caller has it; ``parsed``, its decoded
        arguments (without them, near repeats are not judged); ``effects``, what running it
        again does (its tool's ``read_only`` and ``idempotent``)."""
        if key is None:
            key = canonical_key(call, parsed)
        named = call.name, parsed
        count, two, three, near = guard_check(self.state, key, effects, named, self._near_warn)
        if count < self.limits.repeat_warn and two < 2 and three < 3 and not near:
            return Verdict("run", key, "", "", None)  # (count 0: asked for twice, meant as two)
        verdicts = (
            self._repeat_verdict(call, key, count, effects),
            self._cycle_verdict(call, key, _rounds(two, three)),
            self._near_verdict(call.name, key, near),
        )
        return max(verdicts, key=lambda verdict: _SEVERITY[verdict.action])

    def record(
        self,
        key: str,
        content: str,
        *,
        side_effects: bool,
        call: tuple[str, dict[str, Any] | None] = ("", None),
    ) -> None:
        """Remember what an executed call (``Verdict.key``) returned; ``call`` is its tool
        name and decoded arguments (without them, near repeats are not judged)."""
        guard_record(self.state, key, content, side_effects, call)

    def _repeat_verdict(self, call: ToolCall, key: str, count: int, effects: Effects) -> Verdict:
        if count >= self.limits.repeat_stop:
            return Verdict(
                action="stop",
                key=key,
                kind=WarningKind.REPEAT,
                message=f"{call.name} was called {count} times with the same arguments",
            )
        if count >= self.limits.repeat_warn:
            return Verdict(
                action="warn",
                key=key,
                kind=WarningKind.REPEAT,
                message=(
                    f"you already called {call.name} with these arguments; "
                    f"{self._earlier_result(key)}. {_WHY_NOT_AGAIN[effects]}: "
                    "try something else, or answer with what you have"
                ),
            )
        return Verdict(action="run", key=key)

    def _earlier_result(self, key: str) -> str:
        previous = self.state.results.get(key)
        if previous is None:  # refused, or running in this same turn
            return "see the result of that call"
        if len(previous) > _RESULT_PREVIEW:
            previous = previous[:_RESULT_PREVIEW] + "…"
        return f"the result was: {previous}"

    def _cycle_verdict(self, call: ToolCall, key: str, cycle: tuple[int, int]) -> Verdict:
        size, rounds = cycle
        kind, many = (WarningKind.PINGPONG, "two") if size == 2 else (WarningKind.CYCLE, "three")
        if rounds >= self.limits.pingpong_stop:
            return Verdict(
                action="stop",
                key=key,
                kind=kind,
                message=f"the calls went round the same {many} actions {rounds} times",
            )
        if rounds >= self.limits.pingpong_warn:
            return Verdict(
                action="warn",
                key=key,
                kind=kind,
                message=(
                    f"you keep going round the same {many} calls ({call.name} is one); "
                    "this is a loop: try a different approach, or answer with what you have"
                ),
            )
        return Verdict(action="run", key=key)

    def _near_verdict(self, name: str, key: str, calls: int) -> Verdict:
        if not calls:
            return Verdict(action="run", key=key)
        stop_at = self.limits.near_repeat_stop or calls
        near = near_verdict(self.state.near, name, calls, stop_at)
        action: Action = "stop" if near.action == "stop" else "warn"
        return Verdict(action, key, WarningKind.NEAR_REPEAT, near.message, near.evidence)


def _rounds(two: int, three: int) -> tuple[int, int]:
    """The size of the cycle the latest calls go round (2 or 3), and its rounds in a row,
    from the calls in a row that repeat the one two (three) before them."""
    two = (two + 2) // 2 if two >= 2 else 0
    three = (three + 3) // 3 if three >= 3 else 0
    return (3, three) if three > two else (2, two)


_WHY_NOT_AGAIN: dict[Effects, str] = {
    "none": "It changes nothing, so calling it again gives the same result",
    "idempotent": "Running it again with the same arguments does nothing more",
    "side": "It was not run again, so that a step is not repeated by mistake",
}
