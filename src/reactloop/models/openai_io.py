"""Small helpers for reading a provider's HTTP replies: time left, previews, causes."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any


def time_left(deadline: float | None, timeout: float | None) -> float | None:
    if deadline is None:
        return timeout
    left = max(deadline - time.monotonic(), 0.001)
    return left if timeout is None else min(left, timeout)


def seconds_text(value: float) -> str:
    """``0.9998`` as ``1``, ``0.25`` as ``0.25``: a duration for a message."""
    return f"{round(value, 2):g}"


def preview(content: bytes | bytearray) -> str:
    return repr(" ".join(bytes(content[:200]).decode("utf-8", errors="replace").split()))


def keeping_start(reads: Iterable[bytes], start: bytearray, size: int = 200) -> Iterator[bytes]:
    """``reads`` unchanged, with their first ``size`` bytes copied into ``start``."""
    for data in reads:
        if len(start) < size:
            start.extend(data[: size - len(start)])
        yield data


def body_text(response: Any) -> str:
    try:
        response.read()
        return str(response.text)
    except Exception:  # a body that cannot be read still leaves the status to report
        return ""


def reason(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__ or exc
    text = " ".join(str(cause).split()) or type(cause).__name__
    return text[:200]
