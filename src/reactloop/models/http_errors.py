"""What the HTTP adapters say about a failed exchange: where it failed on the wire, a refused
connection, a body, a cause.

Shared by the SDK adapters (OpenAI-compatible, Responses, Anthropic: both SDKs raise the same
kinds of transport errors); each reads its provider's error bodies itself, in its own ``errors.py``,
with the text helpers here (``one_line``, ``field_text``, ``retry_header``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from reactloop.errors import ModelError
from reactloop.support import json_decode, json_encode

Failure = Literal["timeout", "connect", "broken"]
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt (unless the server's ``x-should-retry`` says otherwise)."""
MAX_MESSAGE_CHARS = 500  # of a provider's error message, as a ``ModelError`` repeats it


def one_line(text: str) -> str:
    """``text`` with its whitespace folded, at most ``MAX_MESSAGE_CHARS`` long."""
    flat = " ".join(text[: MAX_MESSAGE_CHARS * 4].split())
    if len(flat) > MAX_MESSAGE_CHARS:
        return flat[: MAX_MESSAGE_CHARS - 3] + "..."
    return flat


def field_text(value: Any) -> str:
    """A field of an error body as text: a string as is, anything else as (the start of) its
    JSON, never a ``repr`` (which recurses into a deep value and refuses an integer of 4300+
    digits)."""
    if isinstance(value, str):
        return value
    try:
        return json_encode.safe_dumps(value)[:MAX_MESSAGE_CHARS]
    except json_decode.JSONRefused:
        return f"(a {type(value).__name__} that cannot be shown)"


def retry_header(headers: Mapping[str, str]) -> bool | None:
    """What the provider's ``x-should-retry`` header says (both SDKs honour it), if anything."""
    should_retry = headers.get("x-should-retry", "").strip().lower()
    return should_retry == "true" if should_retry in ("true", "false") else None


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


def reply_json(content: bytes, provider: str) -> Any:
    """A non-streamed reply body (bytes as received), decoded; one that is not JSON is a
    ``ModelError`` of kind ``bad_reply`` quoting its start."""
    try:
        return json_decode.safe_loads(content.decode("utf-8", errors="replace").strip())
    except json_decode.JSONRefused as exc:
        message = f"{provider} sent a reply that is not JSON ({exc}): {preview(content)}"
        raise ModelError(message, kind="bad_reply") from None


def failure_of(sdk: Any, exc: BaseException) -> Failure:
    """Where a transport error of an SDK (``openai`` or ``anthropic``) failed: no reply in
    time, no connection, or a body that broke off after the headers."""
    if isinstance(exc, sdk.APITimeoutError):
        return "timeout"
    if isinstance(exc, sdk.APIConnectionError):
        return "connect"
    return "broken"


def transport_error(
    name: str,
    base_url: str,
    exc: BaseException,
    failure: Failure,
    *,
    waited: str = "the timeout",
    what: str = "reply",
    local: str = "",
) -> ModelError:
    """What went wrong on the wire, in one line; retryable unless nothing listens locally.

    ``waited`` describes the wait (``"2 s"``); ``what`` is ``"stream"`` or ``"reply"``;
    ``local`` names the server kind when the provider runs on this machine (else ``""``).
    """
    if failure == "timeout":
        return ModelError(
            f"{name}: no reply from {base_url} within {waited}", retryable=True, kind="timeout"
        )
    if failure == "connect":
        if refused(exc) and urlsplit(base_url).hostname in LOOPBACK_HOSTS:
            server = f"the {local} server" if local else "the server"
            return ModelError(
                f"{name}: nothing listens at {base_url} (connection refused); "
                f"start {server} or pass the right --base-url",
                kind="connection",
            )
        hint = f"is the {local} server running?" if local else "check the network or --base-url"
        return ModelError(
            f"{name}: cannot reach {base_url} ({reason(exc)}); {hint}",
            retryable=True,
            kind="connection",
        )
    return ModelError(
        f"{name}: the {what} from {base_url} broke off ({reason(exc)})",
        retryable=True,
        kind="connection",
    )


def out_of_time(name: str, base_url: str, seconds_left: str) -> ModelError:
    """No complete reply before the run's time limit (``seconds_left``: ``"0.5"``)."""
    return ModelError(
        f"{name}: no complete reply from {base_url} in the {seconds_left} s left in the run",
        kind="timeout",
    )


def went_silent(name: str, base_url: str, seconds: str) -> ModelError:
    """No byte from the server for the model idle timeout (``seconds``: ``"30"``)."""
    return ModelError(
        f"{name}: nothing came from {base_url} for {seconds} s (the model idle timeout); "
        "the server took the request and went silent",
        kind="timeout",
    )
