"""``History``: the run's append-only list of messages.

Appending is the only cheap operation, so the prompt of each step extends the previous one and
providers' prefix caches keep working. ``compact`` is context compaction's one change: a block
of messages replaced in one go, rarely, everything before it left as the same objects (so the
cached prefix stays warm); it is journaled by the compaction itself. ``replace`` rewrites one
message, and every use is recorded so the loop can warn that the prompt's prefix changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from reactloop.messages import Message


class History(Sequence[Message]):
    def __init__(self, messages: Sequence[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)
        self.rewritten_at: int | None = None  # the lowest index rewritten since it was taken
        self.revision = 0  # counts rewrites, so renderers that cache a prefix know to redo it
        self.compactions = 0

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
        if self.rewritten_at is None or position < self.rewritten_at:
            self.rewritten_at = position

    def compact(self, start: int, end: int, block: Sequence[Message]) -> None:
        """Put ``block`` in place of the messages from ``start`` up to ``end`` (context
        compaction): the messages before ``start`` are untouched. A new list is made, so the
        views taken before (the requests already made) still show what they showed."""
        if not 0 <= start <= end <= len(self._messages):
            raise IndexError(f"cannot compact messages {start} to {end} of {len(self)}")
        messages = self._messages
        self._messages = [*messages[:start], *block, *messages[end:]]
        self.revision += 1
        self.compactions += 1

    def view(self) -> Sequence[Message]:
        """The messages as they are now, without copying them: later appends do not show
        (a ``replace`` of one of them does)."""
        return _Prefix(self._messages, len(self._messages))

    def take_prefix_change(self) -> int | None:
        """The lowest index rewritten since the last call, or None; resets the record."""
        changed, self.rewritten_at = self.rewritten_at, None
        return changed


class _Prefix(Sequence[Message]):
    """The first ``length`` messages of an append-only list."""

    __slots__ = ("_length", "_messages")

    def __init__(self, messages: list[Message], length: int) -> None:
        self._messages = messages
        self._length = length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return self._messages[: self._length][index]
        if not -self._length <= index < self._length:
            raise IndexError("message index out of range")
        return self._messages[index % self._length]

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages[: self._length])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
