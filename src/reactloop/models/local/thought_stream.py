"""What ``--stream`` shows of a native step: its ``thought``, read out of the JSON as it comes.

An embedded model writes each native step as one JSON object (``{"thought": "...", "tool":
...}`` or ``{"thought": "...", "answer": "..."}``); streamed as generated, the console showed
that raw JSON. ``ThoughtStream`` wraps the request's ``on_text``: it reads the fragments as
JSON text and passes on only the decoded characters of the top-level ``thought`` string, as
soon as they arrive. The answer is printed once, at the end, as for any run.
"""

from __future__ import annotations

from collections.abc import Callable

THOUGHT_KEY = "thought"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class ThoughtStream:
    """``on_text`` for JSON fragments: calls ``emit`` with the thought's text only."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.depth = 0
        self.in_string = False
        self.is_key = False
        self.expecting_key = False
        self.escape: str | None = None  # the escape read so far, after its backslash
        self.string = ""  # the key being read
        self.key = ""  # the last key at the top level
        self.high_surrogate = ""

    def __call__(self, fragment: str) -> None:
        shown = "".join(self._read(char) for char in fragment)
        if shown:
            self.emit(shown)

    def _read(self, char: str) -> str:
        if self.in_string:
            return self._in_string(char)
        if char == '"':
            self.in_string = True
            self.is_key = self.depth == 1 and self.expecting_key
            self.string = ""
        elif char in "{[":
            self.depth += 1
            self.expecting_key = char == "{" and self.depth == 1
        elif char in "}]":
            self.depth -= 1
        elif char == "," and self.depth == 1:
            self.expecting_key = True
        elif char == ":" and self.depth == 1:
            self.expecting_key = False
        return ""

    def _in_string(self, char: str) -> str:
        if self.escape is not None:
            return self._escaped(char)
        if char == "\\":
            self.escape = ""
            return ""
        if char == '"':
            self.in_string = False
            if self.is_key:
                self.key = self.string
            return ""
        return self._char(char)

    def _escaped(self, char: str) -> str:
        assert self.escape is not None
        if not self.escape and char != "u":
            self.escape = None
            return self._char(_ESCAPES.get(char, char))
        self.escape += char
        if len(self.escape) < 5:  # "u" and four hex digits
            return ""
        code, self.escape = self.escape[1:], None
        try:
            decoded = chr(int(code, 16))
        except ValueError:
            return ""
        if 0xD800 <= ord(decoded) < 0xDC00:
            self.high_surrogate = decoded
            return ""
        if 0xDC00 <= ord(decoded) < 0xE000 and self.high_surrogate:
            pair = (self.high_surrogate + decoded).encode("utf-16", "surrogatepass")
            self.high_surrogate = ""
            return self._char(pair.decode("utf-16"))
        return self._char(decoded)

    def _char(self, char: str) -> str:
        if self.is_key:
            self.string += char
            return ""
        return char if self.depth == 1 and self.key == THOUGHT_KEY else ""
