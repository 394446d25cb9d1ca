"""The loop guard of a resumed run whose journal does not say what the guard judged.

COMPATIBILITY PATH. A journal written before ``tool_call`` events had their ``effects`` (the
guard judged that call, and what its tool does when called again) gives the fold no guard to
hand on (``journal/guard_fold.py``: ``GuardFold.old``). For such a journal only, the guard
is rebuilt as it was before that field existed: each call the guard must have judged (it
has a result, and not one of a budget before the guard or of a call never run), prepared
again with today's toolbox and judged again in order, and each that ran recorded with its
result. A journal with the field never comes here: its guard is the fold's.
"""

from __future__ import annotations

from collections.abc import Callable

from reactloop.journal.run_state import RunState
from reactloop.loop.loop_guard import LoopGuard, effects_of
from reactloop.messages import ToolCall
from reactloop.tools.prepared import PreparedCall

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
