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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from reactloop.journal.warning_kinds import WarningKind
from reactloop.limits import Limits
from reactloop.loop.near_repeat import NearRepeats, NearVerdict
from reactloop.messages import ToolCall
from reactloop.support.json_decode import JSONRefused, safe_loads
from reactloop.support.json_encode import canonical

if TYPE_CHECKING:
    from collections.abc import Callable

    from reactloop.journal.run_state import RunState
    from reactloop.tools.base import Tool
    from reactloop.tools.prepared import PreparedCall

Action = Literal["run", "warn", "stop"]
Effects = Literal["none", "idempotent", "side"]
"""What running a call again does: nothing (read-only), nothing more (idempotent), or maybe
something new (side effects)."""
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
        self._counts: dict[str, int] = {}
        self._results: dict[str, str] = {}
        self._recent = ("", "", "")  # the last three keys, the latest last
        # The keys judged in the current turn; None until ``start_turn``: each call on its own.
        self._this_turn: set[str] | None = None
        # How many calls in a row equal the call two (three) before them, in a cycle of two
        # (three) calls that are not all the same one: A,B,A,B gives 2; A,B,C,A,B,C gives 3.
        self._run_of_two = 0
        self._run_of_three = 0
        warn, stop = limits.near_repeat_warn, limits.near_repeat_stop
        self._near = NearRepeats(warn, stop) if warn is not None and stop is not None else None

    def start_turn(self) -> None:
        """The calls judged from now on are those of a new turn of the model."""
        self._this_turn = set()

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
        this_turn = self._this_turn
        if this_turn is not None:
            if key in this_turn and effects == "side":
                return Verdict("run", key, "", "", None)  # asked for twice at once: meant as two
            this_turn.add(key)
        counts = self._counts
        count = counts[key] = counts.get(key, 0) + 1
        # The calls in a row that repeat the one two (three) before them, this one included.
        third, second, last = self._recent
        two = self._run_of_two + 1 if key == second != last else 0
        three = self._run_of_three + 1 if key == third and not key == last == second else 0
        self._run_of_two, self._run_of_three, self._recent = two, three, (second, last, key)
        near = self._near
        if near is not None and near.count + 1 >= near.warn_at:
            near_verdict = near.check(call.name, parsed, key)
        else:
            near_verdict = None
        if count < self.limits.repeat_warn and two < 2 and three < 3 and near_verdict is None:
            return Verdict("run", key, "", "", None)
        verdicts = (
            self._repeat_verdict(call, key, count, effects),
            self._cycle_verdict(call, key),
            _near_verdict(near_verdict, key),
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
        if side_effects:
            count = self._counts.get(key, 1)
            self._counts = {key: count}
            self._results.clear()
        self._results[key] = content
        if self._near is not None:
            self._near.record(key, content, side_effects, call)

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
        previous = self._results.get(key)
        if previous is None:  # refused, or running in this same turn
            return "see the result of that call"
        if len(previous) > _RESULT_PREVIEW:
            previous = previous[:_RESULT_PREVIEW] + "…"
        return f"the result was: {previous}"

    def _cycle_verdict(self, call: ToolCall, key: str) -> Verdict:
        size, rounds = self._rounds()
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

    def _rounds(self) -> tuple[int, int]:
        """The size of the cycle the latest calls go round (2 or 3), and its rounds in a row."""
        two = (self._run_of_two + 2) // 2 if self._run_of_two >= 2 else 0
        three = (self._run_of_three + 3) // 3 if self._run_of_three >= 3 else 0
        return (3, three) if three > two else (2, two)


_WHY_NOT_AGAIN: dict[Effects, str] = {
    "none": "It changes nothing, so calling it again gives the same result",
    "idempotent": "Running it again with the same arguments does nothing more",
    "side": "It was not run again, so that a step is not repeated by mistake",
}


def _near_verdict(near: NearVerdict | None, key: str) -> Verdict:
    if near is None:
        return Verdict(action="run", key=key)
    action: Action = "stop" if near.action == "stop" else "warn"
    return Verdict(action, key, WarningKind.NEAR_REPEAT, near.message, near.evidence)


# The results the loop guard never saw: refused by a budget before it, or never run.
_UNJUDGED: frozenset[str | None] = frozenset(
    ("stopped", "reply_cut_off", "reply_unreadable", "tool_call_limit", "time_limit")
)


def judged_again(
    guard: LoopGuard, prepare: Callable[[ToolCall], PreparedCall], state: RunState
) -> None:
    """``guard`` as a resumed run's calls left it: each call it judged, judged again in order,
    and each that ran recorded with its result (repeats across a resume count)."""
    results = {m.tool_call_id: m.content for m in state.messages if m.role == "tool"}
    for message in state.messages:
        guard.start_turn()
        for call in message.tool_calls:
            content = results.get(call.id)
            if content is None or state.not_run.get(call.id) in _UNJUDGED:
                continue
            prepared = prepare(call)
            tool = prepared.tool
            guard.check(call, prepared.arguments, key=prepared.key, effects=effects_of(tool))
            if call.id in state.executed:
                side_effects = tool is None or not tool.read_only
                named = (call.name, prepared.arguments)
                guard.record(prepared.key, content, side_effects=side_effects, call=named)
