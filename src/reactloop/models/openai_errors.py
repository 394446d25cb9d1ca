"""Provider errors of OpenAI-compatible servers: what they say, and whether to try again.

Error bodies come in every shape (``../shared/wire-formats``): an ``error`` object with a string
``code`` (OpenAI, DeepSeek, DashScope) or an integer one (vLLM, llama.cpp), vLLM's older
top-level fields, Ollama's plain ``{"error": "text"}``, or something that is not JSON at all
(an HTML page from a proxy is reported by its title).
``provider_error`` reads any of them into one ``ProviderError`` whose message is the provider's
own, and decides ``retryable``:

    retried      408, 409, 429 (rate limit), 5xx, 529, DeepSeek insufficient_system_resource
    not retried  429 insufficient_quota, 429 "request too large", 400 (context length, schema,
                 transcript), 401, 402, 403, 404, 422

``x-should-retry: true|false`` from the server overrides the status. ``RetryPolicy.run`` retries
with exponential backoff and honours ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP
date; ``nan`` or ``inf`` is ignored) up to a cap; its ``sleep`` is injectable so tests never
wait.
"""

from __future__ import annotations

import email.utils
import html
import json
import math
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from reactloop.errors import ModelError, ProviderError

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
NOT_RETRYABLE_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
MAX_MESSAGE_CHARS = 500
HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
HTML_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorBody:
    message: str
    code: str | None = None
    type: str | None = None


def read_error_body(text: str) -> ErrorBody:
    """The message, code and type of an error body of any known shape."""
    try:
        body = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        body = None
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return _from_fields(inner, fallback=text)
        if isinstance(inner, str) and inner.strip():
            return ErrorBody(message=inner.strip())
        if "message" in body or "detail" in body:
            return _from_fields(body, fallback=text)
    return ErrorBody(message=_one_line(_page_text(text)) or "(empty body)")


def _page_text(text: str) -> str:
    """An HTML error page (a proxy's 502) as its title, else its text without tags."""
    if "<html" not in text[:1000].lower():
        return text
    title = HTML_TITLE.search(text)
    return html.unescape(title.group(1) if title else HTML_TAG.sub(" ", text))


def _from_fields(fields: Mapping[str, Any], *, fallback: str) -> ErrorBody:
    message = fields.get("message") or fields.get("detail") or fields.get("type") or fallback
    code = fields.get("code")
    kind = fields.get("type")
    return ErrorBody(
        message=_one_line(str(message)),
        code=None if code is None else str(code),
        type=None if kind is None else str(kind),
    )


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > MAX_MESSAGE_CHARS:
        return flat[: MAX_MESSAGE_CHARS - 3] + "..."
    return flat


def is_retryable(status: int, body: ErrorBody, headers: Mapping[str, str]) -> bool:
    should_retry = headers.get("x-should-retry", "").strip().lower()
    if should_retry in ("true", "false"):
        return should_retry == "true"
    if status not in RETRYABLE_STATUSES:
        return False
    if status == 429:
        markers = {body.code or "", body.type or ""}
        if markers & NOT_RETRYABLE_CODES:
            return False
        if "request too large" in body.message.lower():
            return False
    return True


def provider_error(
    provider: str, status: int, headers: Mapping[str, str], text: str
) -> ProviderError:
    body = read_error_body(text)
    detail = f" [{body.code}]" if body.code and body.code != str(status) else ""
    return ProviderError(
        f"{provider} HTTP {status}{detail}: {body.message}",
        status=status,
        code=body.code or body.type,
        retryable=is_retryable(status, body, headers),
        retry_after=retry_after_seconds(headers),
    )


def stream_error(provider: str, payload: Any, *, where: str = "stream error") -> ProviderError:
    """An error reported inside a 200 reply (``data: {"error": {...}}`` in a stream)."""
    body = read_error_body(json.dumps({"error": payload}) if payload is not None else "")
    transient = _status_code_is_transient(body.code) or any(
        word in f"{body.code} {body.type} {body.message}".lower()
        for word in ("overloaded", "server_error", "rate_limit", "timeout")
    )
    return ProviderError(
        f"{provider} {where}: {body.message}",
        status=None,
        code=body.code or body.type,
        retryable=transient,
    )


def _status_code_is_transient(code: Any) -> bool:
    """vLLM and llama.cpp put an HTTP status in ``code``: 429 and 5xx are worth a retry."""
    try:
        number = int(str(code))
    except ValueError:
        return False
    return number == 429 or number >= 500


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """What the server asks us to wait: ``retry-after-ms``, else ``retry-after`` (s or date)."""
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return max(millis / 1000.0, 0.0)
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


def _finite(text: str | None) -> float | None:
    """``text`` as a finite number; None for "nan", "inf", a 400-digit number or a date."""
    try:
        value = float(text or "")
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff (``base_delay`` doubling up to ``max_delay``, with jitter).

    A server asking for more than ``max_wait`` seconds is not waited for: the error is raised.
    ``sleep`` and ``random`` are injectable for tests.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_wait: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, asked: float | None) -> float:
        if asked is not None:
            return asked
        backoff: float = min(self.base_delay * 2**attempt, self.max_delay)
        return backoff * (0.75 + 0.25 * self.random())

    def run(self, attempt: Callable[[], T], *, deadline: float | None = None) -> T:
        """Call ``attempt`` until it succeeds, raises a non-retryable error, or retries run out.

        ``attempt`` raises ``ModelError``; a ``ProviderError`` may carry ``retry_after``.
        ``deadline`` is a ``time.monotonic()`` value after which no retry starts.
        """
        for number in range(self.max_retries + 1):
            try:
                return attempt()
            except ModelError as exc:
                if not exc.retryable:
                    raise
                if number == self.max_retries:
                    if number == 0:
                        raise
                    raise _give_up(exc, f"gave up after {number + 1} attempts") from exc
                asked = exc.retry_after if isinstance(exc, ProviderError) else None
                wait = self.delay(number, asked)
                if wait > self.max_wait:
                    why = f"server asks to wait {wait:.0f}s (cap {self.max_wait:.0f}s)"
                    raise _give_up(exc, why) from exc
                if deadline is not None and time.monotonic() + wait > deadline:
                    raise _give_up(exc, "no time left in the run to retry") from exc
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover


def _give_up(exc: ModelError, why: str) -> ModelError:
    """The same error with the reason we stopped retrying added to its message."""
    if isinstance(exc, ProviderError):
        return ProviderError(
            f"{exc} ({why})", status=exc.status, code=exc.code, retryable=exc.retryable
        )
    return ModelError(f"{exc} ({why})", retryable=exc.retryable)
