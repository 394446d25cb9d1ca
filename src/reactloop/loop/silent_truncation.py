"""A server that silently cuts a long history: caught from its own token count, once a run.

Ollama's default context window (2,048 or 4,096 tokens in older versions) and llama.cpp's
``--ctx-size`` cut a prompt that does not fit without an error: the model just loses the
beginning of the run, the task included. When a server reports far fewer prompt tokens than
the history it was sent must hold (about four characters a token), the run gets one warning,
``silent_truncation``, that names the likely cause and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reactloop.journal.warning_kinds import WarningKind
from reactloop.loop import notices
from reactloop.messages import Message

MIN_TOKENS = 2048  # a shorter history fits every server's window
RATIO = 0.5  # reported tokens below this share of the estimate mean the history was cut
CHARS_PER_TOKEN = 4
_PER_MESSAGE = 4

Warn = Callable[..., None]


def tokens_of(messages: Sequence[Message]) -> int:
    """About how many tokens the messages hold (four characters a token, and their framing)."""
    chars = 0
    for message in messages:
        chars += len(message.content) + len(message.reasoning or "")
        for call in message.tool_calls:
            chars += len(call.name) + len(call.arguments)
    return chars // CHARS_PER_TOKEN + _PER_MESSAGE * len(messages)


class TruncationWatch:
    """Counts the history as it grows (each message once) and compares each prompt's
    estimate with what the server reported for it."""

    def __init__(self, warn: Warn, tools_tokens: Callable[[], int]) -> None:
        self.warn = warn
        self.done = False
        self._tools = tools_tokens  # the tool specs' tokens, asked for when first needed
        self._counted = 0
        self._tokens: int | None = None
        self._revision = 0

    def tokens(self, history: Sequence[Message], revision: int, upto: int) -> int:
        """The estimate of ``history[:upto]`` and the tool specs, each message counted once
        (all again after a compaction: a new ``revision``)."""
        if self._tokens is None or revision != self._revision:  # new, or compacted: count
            self._revision, self._counted, self._tokens = revision, 0, self._tools()
        if upto > self._counted:
            self._tokens += tokens_of(history[self._counted : upto])
            self._counted = upto
        return self._tokens

    def check(self, history: Sequence[Message], revision: int, sent: int, reported: int) -> None:
        """``reported``: the prompt tokens the server counted for ``history[:sent]``."""
        estimate = self.tokens(history, revision, sent)
        if estimate >= MIN_TOKENS and reported < RATIO * estimate:
            self.done = True
            message = notices.silent_truncation_message(reported, estimate)
            self.warn(WarningKind.SILENT_TRUNCATION, message, reported=reported, estimated=estimate)
