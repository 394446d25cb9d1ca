"""``ReplayModel``: a journal used as a model. It answers with the recorded turns, in order.

``--model replay:TRACE`` works anywhere a model is accepted. The replayed turns are the parsed
ones, tool calls included, so the model is native whatever protocol the recorded run used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import JournalError, UsageError
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.reader import read_events
from reactloop.journal.schema import TurnEvent
from reactloop.messages import ModelTurn
from reactloop.models.scripted import ScriptedModel

if TYPE_CHECKING:
    from reactloop.models.base import ModelSettings


class ReplayModel(ScriptedModel):
    """Plays recorded ``ModelTurn``s in order; running out of turns is a ``ModelError``."""

    def __init__(self, turns: Iterable[ModelTurn], *, name: str = "replay") -> None:
        super().__init__(turns, name=name, keep_requests=False)
        self.native_tools = True  # the recorded turns are parsed ones, whatever the protocol

    @classmethod
    def from_journal(cls, path: str | Path) -> ReplayModel:
        """The turns of a journal; raises ``JournalError`` when it cannot be read."""
        path = Path(path)
        return cls(turns_from_events(read_events(path), path), name=f"replay:{path.name}")

    def exhausted_message(self) -> str:
        return f"the journal has no more model turns (all {len(self._turns)} replayed)"


def turns_from_events(
    events: Iterable[JournalEvent], source: object = "journal"
) -> list[ModelTurn]:
    """The ``ModelTurn`` of every ``turn`` event; a malformed one is a ``JournalError``."""
    turns = []
    for number, event in enumerate(events, start=1):
        if not isinstance(event, TurnEvent):
            continue
        data = event.turn
        try:
            _check_text_fields(data)
            turns.append(ModelTurn.from_dict(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise JournalError(f"{source}: event {number} is a malformed turn ({exc})") from None
    return turns


def _check_text_fields(data: Mapping[str, Any]) -> None:
    for key in ("text", "reasoning", "final_answer", "format_error", "finish_reason"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{key!r} must be a string")
    calls = data.get("tool_calls")
    if calls is not None and not (
        isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
    ):
        raise TypeError("'tool_calls' must be a list of objects")


def from_spec(provider: str, name: str, settings: ModelSettings) -> ReplayModel:
    if not name:
        raise UsageError("replay model needs a journal: --model replay:TRACE.jsonl")
    try:
        return ReplayModel.from_journal(name)
    except JournalError as exc:
        raise UsageError(str(exc)) from None
