"""``GuardState``: the loop guard's memory of a run's calls, one value owned by the run. The
live guard (``loop/loop_guard.py``) keeps its memory in it and words its verdicts from what
the moves below return; the fold (``guard_fold.py``) computes the same value from a journal's
events, and a resumed loop is handed the fold's ``GuardState`` and judges on in it.

The moves, each in one place: ``guard_turn`` (a turn of the model: the calls judged together
from now on), ``guard_check`` (a call judged, its ``tool_call`` event) and ``guard_record``
(a call that ran, its ``tool_result``). They read a call's key and decoded arguments
(``messages.calls.call_key``, made from the call alone) and its ``Effects``: what its tool
does when called again, the one thing about a call that the toolbox says, so the one the
journal keeps (``ToolCallEvent.effects``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reactloop.journal.near_streak import NearStreak, near_check, near_record

Effects = Literal["none", "idempotent", "side"]
"""What running a call again does: nothing (read-only), nothing more (idempotent), or maybe
something new (side effects)."""
EFFECTS: tuple[Effects, ...] = ("none", "idempotent", "side")


@dataclass(slots=True, kw_only=True)
class GuardState:
    counts: dict[str, int] = field(default_factory=dict)  # judged, by key, since a side effect
    results: dict[str, str] = field(default_factory=dict)  # what each key that ran returned
    recent: tuple[str, str, str] = ("", "", "")  # the last three keys, the latest last
    # The keys judged in the current turn; None until a turn starts: each call on its own.
    this_turn: set[str] | None = None
    # How many calls in a row equal the call two (three) before them, in a cycle of two
    # (three) calls that are not all the same one: A,B,A,B gives 2; A,B,C,A,B,C gives 3.
    run_of_two: int = 0
    run_of_three: int = 0
    near: NearStreak = field(default_factory=NearStreak)


def guard_turn(state: GuardState) -> None:
    """The calls judged from now on are those of a new turn of the model."""
    state.this_turn = set()


def guard_check(
    state: GuardState,
    key: str,
    effects: Effects,
    call: tuple[str, dict[str, Any] | None],
    near_warn: int | None,
) -> tuple[int, int, int, int]:
    """A call (its key, effects, tool name and decoded arguments) judged: what the guard's
    verdict reads. Its count since the last side effect (0: asked for twice in one turn, a
    tool with side effects, meant as two: not counted), the calls in a row that repeat the
    one two (three) before them, this one included, and the near repeats in a row it is the
    last of once there are ``near_warn`` (0: not one too many, or ``near_warn`` None)."""
    this_turn = state.this_turn
    if this_turn is not None:
        if key in this_turn and effects == "side":
            return _MEANT_AS_TWO
        this_turn.add(key)
    counts = state.counts
    count = counts[key] = counts.get(key, 0) + 1
    third, second, last = state.recent
    two = state.run_of_two + 1 if key == second != last else 0
    three = state.run_of_three + 1 if key == third and not key == last == second else 0
    state.run_of_two, state.run_of_three, state.recent = two, three, (second, last, key)
    near = state.near
    if near_warn is None or near.count + 1 < near_warn:
        return count, two, three, 0
    return count, two, three, near_check(near, call[0], call[1], key)


_MEANT_AS_TWO = (0, 0, 0, 0)


def guard_record(
    state: GuardState,
    key: str,
    content: str,
    side_effects: bool,
    call: tuple[str, dict[str, Any] | None] = ("", None),
) -> None:
    """What a call that ran returned; ``side_effects``: its tool may have changed what later
    calls see (not read-only), so every other call's record is forgotten. ``call``: its tool
    name and decoded arguments (without them, near repeats are not judged)."""
    if side_effects:
        state.counts = {key: state.counts.get(key, 1)}
        state.results.clear()
    state.results[key] = content
    near_record(state.near, key, content, side_effects, call)
