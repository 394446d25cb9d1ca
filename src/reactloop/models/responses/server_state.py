"""``--server-state``: the server holds the conversation, each call sends only what is new.

Each response is stored (``store: true``); the next request names it as
``previous_response_id`` and sends the items after its assistant turn (the tool outputs, the
harness's notes). The journal still records every item and every response id (the turn's
``raw_message``), so a run stays readable; but the server's copy cannot be compacted or
edited: a history whose prefix is not the one the server holds is refused with a
``ModelError`` that says so, never sent as if it were (the agent also turns compaction off
for a model whose ``holds_history`` is true).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reactloop.errors import ModelError
from reactloop.messages import Message, ModelTurn
from reactloop.models.responses.request import assistant_items, render_items, response_id


class ServerState:
    """What the server holds for one adapter: the history up to its last response."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._held: list[Message] = []
        self._response_id: str | None = None

    def remember(self, messages: Sequence[Message], turn: ModelTurn) -> None:
        """After a call: the server now holds ``messages`` and the response of ``turn``."""
        raw = turn.raw_message if isinstance(turn.raw_message, dict) else {}
        found = raw.get("response_id")
        self._held = list(messages)
        self._response_id = found if isinstance(found, str) and found else None

    def continuation(self, messages: Sequence[Message], items: list[Any]) -> dict[str, Any]:
        """The body fields for ``messages``: all ``items`` at first, then what is new."""
        if self._response_id is None:
            return {"input": items, "store": True}
        held = len(self._held)
        same = len(messages) > held and all(
            a is b for a, b in zip(messages[:held], self._held, strict=True)
        )
        turn = messages[held] if same else None
        if turn is None or turn.role != "assistant" or response_id(turn) != self._response_id:
            raise ModelError(
                f"{self.name} holds this conversation on the server (--server-state, response "
                f"{self._response_id}) and the history no longer continues it: it was compacted "
                "or edited, which a server-held history cannot follow; run without "
                "--server-state to send the whole history each call",
                kind="bad_request",
            )
        new = render_items(messages[held:])[len(assistant_items(turn)) :]
        return {"input": new, "store": True, "previous_response_id": self._response_id}
