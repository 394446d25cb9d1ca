"""``CallIds``: every call of a run gets an id no other call of it has; a provider's own id, if
it had to change, stays in ``wire_id`` for echoing. Made here and nowhere else."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from reactloop.messages import ModelTurn, ToolCall, own_call_id


class CallIds:
    """The ids a run's calls have taken so far."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def unique(self, turn: ModelTurn, step: int) -> ModelTurn:
        """``turn`` with every call's id unique in the run, and taken from now on."""
        seen = self.seen
        for index, call in enumerate(turn.tool_calls):
            if not call.id or call.id in seen:
                return self._renamed(turn, step, index)
            seen.add(call.id)
        return turn

    def remember(self, calls: Iterable[ToolCall]) -> None:
        """Ids already used (by the earlier runs of a conversation): new calls get others."""
        self.seen.update(call.id for call in calls)

    def _renamed(self, turn: ModelTurn, step: int, start: int) -> ModelTurn:
        """``turn`` with fresh ids for its calls from ``start`` on whose id is taken or empty."""
        calls = list(turn.tool_calls[:start])
        for index, call in enumerate(turn.tool_calls[start:], start=start):
            if not call.id or call.id in self.seen:
                wire_id = call.wire_id if call.wire_id is not None else call.id
                call = dataclasses.replace(call, id=self._fresh_id(step, index), wire_id=wire_id)
            self.seen.add(call.id)
            calls.append(call)
        return dataclasses.replace(turn, tool_calls=tuple(calls))

    def _fresh_id(self, step: int, index: int) -> str:
        candidate = own_call_id(step, index)
        suffix = 0
        while candidate in self.seen:
            suffix += 1
            candidate = f"call_{step}_{index}_{suffix}"
        return candidate
