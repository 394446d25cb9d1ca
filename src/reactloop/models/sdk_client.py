"""An SDK adapter's line to its provider: the one home of its client, the client's deadline
transport and TLS context, the retry policy and the attempt.

The three SDK adapters (``openai``, ``responses``, ``anthropic``) differ in the paths they post
to and how they read a reply, never in how they reach the server. Each once built its own
client, and one copy (the Responses adapter's) lacked the deadline transport: a server that
trickled its headers held a 3 s run for 7 s and kept its thread and connection after. Here
``make_client`` builds every SDK client; ``SdkClient.call`` is one call, retries included::

    line = make_client(OPENAI, name="openai:m", base_url=url, api_key=key,
                       status_error=my_errors, max_retries=2)
    turn = line.call("/chat/completions", body, read, deadline=deadline, seconds_left=30.0)
"""

from __future__ import annotations

import importlib
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from reactloop.models.http_deadline import KEEPALIVE, ReplyDeadline
from reactloop.models.retry import RetryPolicy
from reactloop.models.sdk_attempt import SdkAttempt, StatusError, post_body
from reactloop.models.tls import shared_tls_context

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Sdk:
    """One provider SDK: its module, its client class, and the timeout it is given for a call
    without a time limit (None: the SDK's own default)."""

    module: str
    client: str
    unlimited_timeout: float | None = None


OPENAI = Sdk(module="openai", client="OpenAI")
# a call without a time limit is given the SDK's own default read timeout, as a number
ANTHROPIC = Sdk(module="anthropic", client="Anthropic", unlimited_timeout=600.0)


def sdk_modules(sdk: Sdk) -> tuple[Any, Any]:
    """The SDK and its HTTP library, imported when the first model is made (before any run's
    clock starts); ``ModuleNotFoundError`` when the SDK is not installed."""
    return importlib.import_module(sdk.module), importlib.import_module("httpx2")


@dataclass(frozen=True, kw_only=True)
class SdkClient:
    """The SDK's ``client``, the ``retry`` policy, and the ``attempt`` they share."""

    client: Any
    sdk: Any
    retry: RetryPolicy
    attempt: SdkAttempt
    unlimited_timeout: float | None

    def call(
        self,
        path: str,
        body: dict[str, Any],
        read: Callable[[Any, Iterator[bytes]], T],
        *,
        deadline: float | None,
        seconds_left: float | None,
    ) -> T:
        """``read(response, chunks)`` of ``body`` POSTed to ``path``, tried again as
        ``retry`` says; raises only ``ModelError``. ``deadline``: a ``time.monotonic()``."""

        def create(timeout: float | None) -> Any:
            limit = self.unlimited_timeout if timeout is None else timeout
            return post_body(self.client, self.sdk, path, body, limit)

        streaming = bool(body.get("stream"))

        def attempt() -> T:
            return self.attempt.run(
                create, read, deadline=deadline, seconds_left=seconds_left, streaming=streaming
            )

        return self.retry.run(attempt, deadline=deadline)


def make_client(
    sdk: Sdk,
    *,
    name: str,
    base_url: str,
    api_key: str,
    status_error: StatusError,
    max_retries: int = 2,
    sleep: Callable[[float], None] = time.sleep,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    http_client: Any = None,
    local: str = "",
) -> SdkClient:
    """The client of one adapter: the SDK's own retries off (``RetryPolicy`` retries up to
    ``max_retries`` times; ``sleep`` is a seam for tests), every
    socket operation under the run's deadline (``http_deadline.py``), the process's TLS
    context, TCP keep-alives for calls that are silent for minutes. ``http_client`` (an
    ``httpx2.Client``) replaces the HTTP client: the deadline is then checked between reads.
    ``timeout`` bounds each connect and read (retried when it passes); ``idle_timeout`` the
    time without a byte from the server (not retried: ``SdkAttempt``)."""
    module, httpx = sdk_modules(sdk)
    deadlines = ReplyDeadline()
    if http_client is None:
        http_client = module.DefaultHttpxClient(
            verify=shared_tls_context(httpx),
            transport=deadlines.transport(httpx, socket_options=KEEPALIVE),
            event_hooks={"response": [deadlines.on_response]},
        )
    client = getattr(module, sdk.client)(
        api_key=api_key,
        base_url=base_url,
        max_retries=0,
        http_client=http_client,
        **({"timeout": timeout} if timeout else {}),
    )
    _tell_platform(client)
    attempt = SdkAttempt(
        name=name,
        base_url=base_url,
        sdk=module,
        httpx=httpx,
        deadlines=deadlines,
        status_error=status_error,
        timeout=timeout,
        idle_timeout=idle_timeout,
        local=local,
    )
    return SdkClient(
        client=client,
        sdk=module,
        retry=RetryPolicy(max_retries=max(max_retries, 0), sleep=sleep),
        attempt=attempt,
        unlimited_timeout=sdk.unlimited_timeout,
    )


# what ``platform.system()`` says, as the SDKs spell it in their ``X-Stainless-OS`` header
_PLATFORMS = {"linux": "Linux", "darwin": "MacOS", "windows": "Windows"}


def _tell_platform(client: Any) -> None:
    """Give the client its platform, as the SDKs' async clients work it out for themselves
    (off the event loop). Otherwise the openai SDK's first request works it out with
    ``platform.platform()``, which on Linux runs ``uname -p`` in a subprocess: a fork and an
    exec in the first run, 5 ms and more (the anthropic SDK no longer does, anthropics/
    anthropic-sdk-python#1762). Only the three systems that ``platform.system()`` names without
    a doubt are told; on iOS, Android or anything else the SDK finds out as before."""
    if getattr(client, "_platform", "") is not None:  # known already, or an SDK without it
        return
    machine, release = platform.machine().lower(), platform.release().lower()
    if machine.startswith(("iphone", "ipad")) or "android" in release:
        return
    if hasattr(sys, "getandroidapilevel"):
        return
    client._platform = _PLATFORMS.get(platform.system().lower())
