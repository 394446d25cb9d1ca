"""Trying a failed call again: how long the server asks us to wait, and the backoff.

``RetryPolicy.run`` retries with exponential backoff and honours ``retry-after-ms`` /
``retry-after`` (seconds or an HTTP date; ``nan`` or ``inf`` is ignored) up to a cap; its
``sleep`` is injectable so tests never wait. Which errors are worth a retry is decided where
they are made (each adapter's ``errors``): ``ModelError.retryable``. Shared by the HTTP adapters
(``models/sdk_client.py``), whose one attempt is ``models/sdk_attempt.py``'s ``SdkAttempt.run``.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from reactloop.errors import ModelError, ProviderError

T = TypeVar("T")


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
            f"{exc} ({why})",
            status=exc.status,
            code=exc.code,
            retryable=exc.retryable,
            kind=exc.kind,
        )
    return ModelError(f"{exc} ({why})", retryable=exc.retryable, kind=exc.kind)
