"""One attempt at a call through a provider's SDK: the run's time limit, and every failure named.

Shared by the SDK adapters (``openai``, ``responses``, ``anthropic``; their client is made by
``models/sdk_client.py``), whose attempts differ only in the path they post to and how they read
the reply. ``SdkAttempt.run`` opens the SDK's streaming response with what is left of the run's
time, reads it under ``ReplyDeadline`` (no reply, however slow, outlasts the run), and turns
every failure into a ``ModelError``: an HTTP status by the adapter's own ``status_error`` (its
provider's error bodies), a transport failure by ``transport_error``, the run's time running
out by ``out_of_time``, and no byte for ``idle_timeout`` seconds by ``went_silent`` (not
retried: the user said how long silence may last). ``RetryPolicy.run`` (``models/retry.py``)
decides whether to try again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from reactloop.errors import ModelError
from reactloop.models.http_deadline import OutOfTime, ReplyDeadline, seconds_text, time_left
from reactloop.models.http_errors import (
    body_text,
    failure_of,
    out_of_time,
    transport_error,
    went_silent,
)

T = TypeVar("T")
StatusError = Callable[[int, Any, str], ModelError]  # (status, headers, body text) -> error
Create = Callable[[float | None], AbstractContextManager[Any]]  # timeout -> the SDK's response


def post_body(client: Any, sdk: Any, path: str, body: Any, timeout: Any) -> Any:
    """Open the response to ``body`` POSTed to ``path``, unread, as a context manager.

    The SDK's ``post`` (its documented way to any endpoint: the same timeouts and typed errors)
    sends the body as it is; the typed ``create`` methods first walk the whole history to check
    and transform it, about 0.8 ms a call and growing with the history. The reply's bytes are
    read by the caller, under the run's deadline. ``timeout`` None: the SDK's default.
    """
    stream = client.post(
        path,
        body=body,
        options={} if timeout is None else {"timeout": timeout},
        cast_to=object,
        stream=True,
        stream_cls=sdk.Stream[object],
    )
    return contextlib.closing(stream.response)


@dataclass(frozen=True, kw_only=True)
class SdkAttempt:
    """What every attempt of one adapter shares.

    ``sdk`` is the SDK module (its ``APIStatusError`` and ``APIConnectionError`` are caught),
    ``httpx`` its HTTP library; ``timeout`` the adapter's own bound on each connect and read;
    ``idle_timeout`` the most seconds without a byte from the server (connecting included);
    ``local`` names the server kind when it runs on this machine (for ``transport_error``).
    """

    name: str
    base_url: str
    sdk: Any
    httpx: Any
    deadlines: ReplyDeadline
    status_error: StatusError
    timeout: float | None = None
    idle_timeout: float | None = None
    local: str = ""

    def run(
        self,
        create: Create,
        read: Callable[[Any, Iterator[bytes]], T],
        *,
        deadline: float | None,
        seconds_left: float | None = None,
        streaming: bool = False,
    ) -> T:
        """``read(response, chunks)`` of the response ``create(timeout)`` opens; raises only
        ``ModelError``. ``deadline`` (``time.monotonic()``) ends the attempt; ``seconds_left``
        is the run's time when the call began (for the message); ``streaming``: a stream."""
        sdk, httpx = self.sdk, self.httpx
        timeout = time_left(deadline, self.timeout)
        idle = self.idle_timeout
        if idle is not None and (timeout is None or idle < timeout):
            timeout = idle  # every socket operation's: the longest silence allowed
        with self.deadlines.watch(deadline) as watch:
            try:
                with create(timeout) as response:
                    return read(response, watch.reads(response.iter_bytes()))
            except sdk.APIStatusError as exc:
                http = exc.response
                raise self.status_error(http.status_code, http.headers, body_text(http)) from None
            except (sdk.APIConnectionError, httpx.HTTPError, OutOfTime) as exc:
                if watch.expired or isinstance(exc, OutOfTime):
                    left = seconds_text(seconds_left or 0.0)
                    raise out_of_time(self.name, self.base_url, left) from None
                raise self._wire_error(exc, timeout, streaming) from None

    def _wire_error(self, exc: Exception, timeout: float | None, streaming: bool) -> ModelError:
        """A transport failure; a timeout that was the idle timeout is the server's silence."""
        idle = self.idle_timeout
        timed_out = isinstance(exc, (self.sdk.APITimeoutError, self.httpx.TimeoutException))
        if timed_out and idle is not None and timeout == idle:
            return went_silent(self.name, self.base_url, seconds_text(idle))
        return self._transport_error(exc, timeout, streaming)

    def _transport_error(
        self, exc: Exception, timeout: float | None, streaming: bool
    ) -> ModelError:
        return transport_error(
            self.name,
            self.base_url,
            exc,
            failure_of(self.sdk, exc),
            waited="the timeout" if timeout is None else f"{seconds_text(timeout)} s",
            what="stream" if streaming else "reply",
            local=self.local,
        )
