"""The run's time limit on the wire: no reply, however slow, outlasts it.

httpx timeouts bound each socket operation, not a whole reply: a server that trickles a byte at
a time, or stalls after its headers, would hold a run far past ``Limits.max_seconds``.
``ReplyDeadline`` closes the gap for the HTTP adapters (OpenAI-compatible, Anthropic):

* ``on_response`` is an httpx response hook: when a reply's headers arrive, the process's one
  watchdog (``watchdog.py``) is told to shut its connection down at the deadline of the attempt
  running in this thread, which ends any read still waiting then (the SDK's own read of an
  error body too);
* ``Watch.reads`` checks the deadline between reads, also for clients whose socket it cannot
  reach (an injected ``http_client``);
* ``time_left`` is the timeout to give the SDK for one attempt.

::

    deadlines = ReplyDeadline()
    client = sdk.DefaultHttpxClient(event_hooks={"response": [deadlines.on_response]})
    with deadlines.watch(time.monotonic() + 5.0) as watch:
        ...  # requests made from this thread; ``watch.expired`` says whether time ran out
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from reactloop.models.watchdog import WATCHDOG, Guard


class OutOfTime(Exception):
    """The deadline passed while a reply was still arriving."""


class Watch:
    """The deadline of one attempt (None: no limit) and the connections it will cut."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._guards: list[Guard] = []

    @property
    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def guard(self, connection: socket.socket) -> None:
        """Shut ``connection`` down when the deadline passes, unless ``close`` comes first."""
        if self.deadline is not None:
            self._guards.append(WATCHDOG.guard(connection, self.deadline))

    def reads(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """``chunks`` as they arrive; ``OutOfTime`` once one arrives after the deadline."""
        for data in chunks:
            if self.expired:
                raise OutOfTime
            yield data

    def close(self) -> None:
        for guard in self._guards:
            guard.cancel()


class ReplyDeadline:
    """Deadlines per thread for one HTTP client (see the module docstring)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextlib.contextmanager
    def watch(self, deadline: float | None) -> Iterator[Watch]:
        """Guard every reply received in this thread inside the block with ``deadline``."""
        watch = Watch(deadline)
        outer = getattr(self._local, "watch", None)
        self._local.watch = watch
        try:
            yield watch
        finally:
            self._local.watch = outer
            watch.close()

    def on_response(self, response: Any) -> None:
        """The httpx ``response`` event hook: guard the reply's connection."""
        watch: Watch | None = getattr(self._local, "watch", None)
        connection = _socket_of(response)
        if watch is not None and connection is not None:
            watch.guard(connection)


def time_left(deadline: float | None, timeout: float | None) -> float | None:
    """Seconds until ``deadline`` (a ``time.monotonic()`` value), capped by ``timeout``."""
    if deadline is None:
        return timeout
    left = max(deadline - time.monotonic(), 0.001)
    return left if timeout is None else min(left, timeout)


def seconds_text(value: float) -> str:
    """``0.9998`` as ``1``, ``0.25`` as ``0.25``: a duration for a message."""
    return f"{round(value, 2):g}"


def _socket_of(response: Any) -> socket.socket | None:
    """The socket under an httpx response (httpcore's ``network_stream`` extension), if any."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    get_extra_info = getattr(stream, "get_extra_info", None)
    connection = get_extra_info("socket") if callable(get_extra_info) else None
    return connection if isinstance(connection, socket.socket) else None
