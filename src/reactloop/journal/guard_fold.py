"""``GuardFold``: the loop guard's part of a run's state (``RunState.guard``), moved on by the
fold (``fold.py`` calls these) with the moves the live guard makes (``guard_state.py``), so
that the fold of a run's events so far is the live guard's ``GuardState`` at that event
(``tests/journal/test_run_state_fold.py``):

- a ``turn``: ``guard_turn``, the calls judged together from now on;
- a ``tool_call`` with ``effects``: a call the guard judged, ``guard_check``; its key and
  decoded arguments made again from the call (``messages.calls.call_key``: they need no
  toolbox, so the journal does not keep them), the near-repeat threshold the run's
  (``run_start``'s ``limits``, then a ``resume``'s);
- the ``tool_result`` of a call that ran: ``guard_record``, with side effects unless the
  call's ``effects`` are ``none``.

A resumed loop judges the last turn's open calls again as it settles them: ``forget`` takes
their checks back (the moves are kept, and folded again without them).

COMPATIBILITY PATH: a journal written before ``effects`` existed does not say what the guard
judged. A result of a call the guard must have judged (it ran, or the guard, the approver or
a cancel refused it after the guard) whose ``tool_call`` has no ``effects`` marks the fold
``old``: the resumed loop then rebuilds the guard from the history and today's toolbox, as
it always did (``loop/guard_legacy.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from reactloop.journal.guard_state import (
    EFFECTS,
    Effects,
    GuardState,
    guard_check,
    guard_record,
    guard_turn,
)
from reactloop.limits import Limits
from reactloop.messages import ToolCall
from reactloop.messages.calls import ArgumentsError, call_key, decode_arguments


class Check(NamedTuple):
    """A call the guard judged, as its ``tool_call`` event gives it."""

    call_id: str
    key: str
    effects: Effects
    call: tuple[str, dict[str, Any] | None]  # its tool name and decoded arguments
    near_warn: int | None  # the run's threshold then


class Ran(NamedTuple):
    """A judged call that ran, and what it returned (its ``tool_result``'s ``content``)."""

    check: Check
    content: str


_TURN = "turn"
Move = Check | Ran | str  # ``_TURN``: a turn started
_EFFECTS: dict[str, Effects] = {effects: effects for effects in EFFECTS}
# Why a call the guard judged did not run: the guard, the approver or a cancel refused it.
_JUDGED_NOT_RUN = frozenset({"loop_guard", "loop_detected", "declined", "cancelled"})


@dataclass(kw_only=True)
class GuardFold:
    state: GuardState = field(default_factory=GuardState)  # the live guard's, at this event
    near_warn: int | None = Limits.near_repeat_warn
    checks: dict[str, Check] = field(default_factory=dict)  # the turn's judged calls, by id
    moves: list[Move] = field(default_factory=list)  # every move, to fold again without some
    old: bool = False  # a journal written before ``effects``: no guard to hand on


def on_limits(fold: GuardFold, limits: Any) -> None:
    """The limits the run goes on under (``run_start``'s, a ``resume``'s): its threshold."""
    if isinstance(limits, Mapping) and "near_repeat_warn" in limits:
        warn, stop = limits["near_repeat_warn"], limits.get("near_repeat_stop")
        fold.near_warn = warn if isinstance(warn, int) and isinstance(stop, int) else None


def on_turn(fold: GuardFold) -> None:
    fold.checks = {}
    _move(fold, _TURN)


def on_call(fold: GuardFold, call: dict[str, Any], effects: str | None) -> None:
    """A ``tool_call`` event: with ``effects``, a call the guard judged."""
    if effects is None:
        return
    made = ToolCall.from_dict(call)
    arguments = _decoded(made.arguments)
    key = call_key(made.name, made.arguments, arguments)
    named = (made.name, arguments)
    check = Check(made.id, key, _EFFECTS.get(effects, "side"), named, fold.near_warn)
    fold.checks[made.id] = check
    _move(fold, check)


def on_result(
    fold: GuardFold, call_id: str, executed: bool, not_run: str | None, content: str
) -> None:
    """A ``tool_result`` event: a judged call that ran is recorded."""
    check = fold.checks.get(call_id)
    if check is None:
        if executed or not_run in _JUDGED_NOT_RUN:
            fold.old = True
    elif executed:
        _move(fold, Ran(check, content))


def forget(fold: GuardFold, call_ids: Iterable[str]) -> None:
    """The checks of the calls ``call_ids`` taken back: a resumed loop judges them again."""
    gone = {call_id for call_id in call_ids if fold.checks.pop(call_id, None) is not None}
    if not gone:
        return
    fold.moves = [m for m in fold.moves if not (isinstance(m, Check) and m.call_id in gone)]
    fold.state = GuardState()
    for move in fold.moves:
        _apply(fold.state, move)


def _move(fold: GuardFold, move: Move) -> None:
    fold.moves.append(move)
    _apply(fold.state, move)


def _apply(state: GuardState, move: Move) -> None:
    if isinstance(move, Check):
        guard_check(state, move.key, move.effects, move.call, move.near_warn)
    elif isinstance(move, Ran):
        check = move.check
        guard_record(state, check.key, move.content, check.effects != "none", check.call)
    else:
        guard_turn(state)


def _decoded(text: str) -> dict[str, Any] | None:
    """A call's arguments as ``PreparedCall.arguments`` has them (None: not decoded)."""
    try:
        return decode_arguments(text)
    except ArgumentsError:
        return None
