"""What the HTTP adapters say about a failed exchange: a refused connection, a body, a cause.

Shared by the OpenAI-compatible and the Anthropic adapters (each classifies its provider's
error bodies itself, in its own ``errors.py``).
"""

from __future__ import annotations

from typing import Any

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception behind it) is a refused connection."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        text = str(current).lower()
        if "connection refused" in text or "errno 111" in text:
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def body_text(response: Any) -> str:
    """An HTTP response's body as text, or "" when it cannot be read."""
    try:
        response.read()
        return str(response.text)
    except Exception:  # a body that cannot be read still leaves the status to report
        return ""


def reason(exc: BaseException) -> str:
    """The cause of a transport error, on one line, at most 200 characters."""
    cause = exc.__cause__ or exc.__context__ or exc
    return (" ".join(str(cause).split()) or type(cause).__name__)[:200]


def preview(content: bytes | bytearray) -> str:
    """The start of a body a server sent, quoted, whitespace folded."""
    return repr(" ".join(bytes(content[:200]).decode("utf-8", errors="replace").split()))
