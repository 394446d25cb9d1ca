"""What the tool-search resume tests share: a deferred ``lookup`` over the user's notes, a
``multiply`` always sent, and the fake Anthropic server's replies for a run that searches,
looks up, is stopped by ``max_tool_calls=1`` at ``multiply``, and answers 70 once resumed."""

from __future__ import annotations

from reactloop import tool
from reactloop.testing import message, tool_use
from reactloop.testing.anthropic_tool_search import search_blocks

NOTES = {"price": "7", "guests": "10"}


@tool(defer=True, read_only=True)
def lookup(key: str) -> str:
    """Read a value from the user's notes by its key.

    Args:
        key: the name of the note
    """
    return NOTES[key]


@tool(read_only=True)
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


REPLIES = [
    message(
        content=[*search_blocks("read a note", ["lookup"]), tool_use("lookup", {"key": "price"})]
    ),
    message(content=[tool_use("multiply", {"a": 7, "b": 10})]),  # over max_tool_calls
    message(content=[tool_use("lookup", {"key": "guests"})]),
    message("70"),
]
