"""The run's time limit on the wire: no reply, however slow, outlasts it.

httpx timeouts bound each socket operation, not a whole reply: a server that trickles a byte at
a time (its headers as well as its body), or stalls after its headers, would hold a run far
past ``Limits.max_seconds``. ``ReplyDeadline`` closes the gap for the SDK adapters
(chat, Responses, Anthropic; their clients are made by ``sdk_client.py``):

* ``transport`` makes the client's HTTP transport, whose every socket operation (connecting,
  the TLS handshake, sending the request, reading headers and body) is given at most the time
  left before the deadline of the attempt running in this thread, and fails as a timeout once
  it has passed: no exchange outlasts the deadline, whatever the peer does (only the name
  lookup, which no socket timeout bounds, is not cut);
* ``on_response`` is an httpx response hook: when a reply's headers arrive, the process's one
  watchdog (``watchdog.py``) is told to shut its connection down at the deadline of the attempt
  running in this thread, which ends any read still waiting then (the SDK's own read of an
  error body too);
* ``Watch.reads`` checks the deadline between reads, also for clients whose socket it cannot
  reach (an injected ``http_client``);
* ``time_left`` is the timeout to give the SDK for one attempt.

::

    deadlines = ReplyDeadline()
    client = sdk.DefaultHttpxClient(
        transport=deadlines.transport(httpx2, verify=context),
        event_hooks={"response": [deadlines.on_response]},
    )
    with deadlines.watch(time.monotonic() + 5.0) as watch:
        ...  # requests made from this thread; ``watch.expired`` says whether time ran out
"""

from __future__ import annotations

import contextlib
import importlib
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from reactloop.models.tls import shared_tls_context
from reactloop.models.watchdog import WATCHDOG, Guard

SDK_LIMITS = {"max_connections": 1000, "max_keepalive_connections": 100}  # both SDKs' defaults
# TCP keep-alives for requests that idle for minutes: the Anthropic SDK's, which it sets only on
# the transport it makes itself; ``sdk_client.py`` gives them to every SDK adapter's transport
KEEPALIVE = [
    (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    *[
        (socket.IPPROTO_TCP, getattr(socket, name), value)
        for name, value in (("TCP_KEEPINTVL", 60), ("TCP_KEEPCNT", 5), ("TCP_KEEPIDLE", 60))
        if hasattr(socket, name)
    ],
]


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

    @property
    def deadline(self) -> float | None:
        """The deadline of the attempt running in this thread (None: none)."""
        watch: Watch | None = getattr(self._local, "watch", None)
        return None if watch is None else watch.deadline

    def transport(self, httpx: Any, **options: Any) -> Any:
        """An ``httpx.HTTPTransport(**options)`` whose socket operations keep to the deadline,
        with the SDKs' own connection limits and TLS context (given a transport, the client
        no longer applies its ``limits`` and ``verify`` to it)."""
        options.setdefault("limits", httpx.Limits(**SDK_LIMITS))
        options.setdefault("verify", shared_tls_context(httpx))
        made = httpx.HTTPTransport(**options)
        pool = made._pool  # httpcore's ConnectionPool: its backend makes every connection
        pool._network_backend = _DeadlineBackend(pool._network_backend, self)
        return made

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


class _DeadlineBackend:
    """httpcore's network backend, every connection's operations capped by the deadline."""

    def __init__(self, inner: Any, deadlines: ReplyDeadline) -> None:
        self._inner = inner
        self._cap = _Cap(deadlines, importlib.import_module("httpcore2"))

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, **more: Any) -> Any:
        timeout = self._cap.timeout(timeout, "ConnectTimeout")
        return _DeadlineStream(self._inner.connect_tcp(host, port, timeout, **more), self._cap)

    def connect_unix_socket(self, path: str, timeout: float | None = None, **more: Any) -> Any:
        timeout = self._cap.timeout(timeout, "ConnectTimeout")
        return _DeadlineStream(self._inner.connect_unix_socket(path, timeout, **more), self._cap)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _DeadlineStream:
    """One connection: each read, write and TLS handshake ends by the deadline."""

    def __init__(self, inner: Any, cap: _Cap) -> None:
        self._inner = inner
        self._cap = cap

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, self._cap.timeout(timeout, "ReadTimeout"))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._cap.timeout(timeout, "WriteTimeout"))

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> Any:  # fmt: skip
        timeout = self._cap.timeout(timeout, "ConnectTimeout")
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout), self._cap
        )

    def close(self) -> None:
        self._inner.close()

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Cap:
    """A socket operation's timeout, capped by the time left in this thread's attempt."""

    def __init__(self, deadlines: ReplyDeadline, httpcore: Any) -> None:
        self._deadlines = deadlines
        self._httpcore = httpcore

    def timeout(self, timeout: float | None, error: str) -> float | None:
        """``timeout``, or less; raises httpcore's ``error`` once the deadline has passed."""
        deadline = self._deadlines.deadline
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise getattr(self._httpcore, error)("the run's time limit has passed")
        return left if timeout is None else min(left, timeout)
