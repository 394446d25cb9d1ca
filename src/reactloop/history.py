"""``History``: the run's append-only list of messages.

Appending is the only cheap operation, so the prompt of each step extends the previous one and
providers' prefix caches keep working. ``replace`` exists for future context management; every
use is recorded so the loop can warn that the prompt's prefix changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from reactloop.messages import Message


class History(Sequence[Message]):
    def __init__(self, messages: Sequence[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)
        self._changed_at: int | None = None
        self.revision = 0  # counts rewrites, so renderers that cache a prefix know to redo it

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        return self._messages[index]

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def append(self, message: Message) -> None:
        self._messages.append(message)

    def extend(self, messages: Sequence[Message]) -> None:
        self._messages.extend(messages)

    def replace(self, index: int, message: Message) -> None:
        """Rewrite an earlier message (this breaks prompt-prefix caching; it is recorded)."""
        self._messages[index] = message
        self.revision += 1
        position = index % len(self._messages)
        if self._changed_at is None or position < self._changed_at:
            self._changed_at = position

    def take_prefix_change(self) -> int | None:
        """The lowest index rewritten since the last call, or None; resets the record."""
        changed, self._changed_at = self._changed_at, None
        return changed
