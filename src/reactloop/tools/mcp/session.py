"""``Session``: one start of one MCP server, held open by a task on the background loop.

The task enters the SDK's ``Client`` (and, for stdio, the server process) and leaves it when
told to stop, so every anyio scope is entered and exited by the same task. The start-up limit
is the deadline of a cancel scope around the whole connection, lifted once the handshake is
done. The server's stderr goes to a temporary file: its last lines explain a crash. A stdio
server runs under a reaper (``reaper``), so that what it starts goes when it does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
import shutil
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from typing import IO, Any, TextIO, cast

from reactloop._version import __version__
from reactloop.errors import describe_exception
from reactloop.tools.mcp.config import ServerConfig
from reactloop.tools.mcp.elicitation import Elicit, sdk_callback
from reactloop.tools.mcp.oauth import oauth_for
from reactloop.tools.mcp.reaper import reaper_argv
from reactloop.tools.mcp.received import Received
from reactloop.tools.mcp.stdio import NotUTF8, stdio_client

STDERR_TAIL = 300
SSE_IDLE_SECONDS = 86_400.0  # how long the SSE stream may be silent (between calls)
TAIL_BYTES = 4096


class StartTimeout(TimeoutError):
    pass


class Session:
    def __init__(
        self, config: ServerConfig, elicit: Elicit | None = None, mode: str = "auto"
    ) -> None:
        self.config = config
        self.elicit = elicit
        self.mode = mode  # the SDK client's: "auto", "legacy" or a modern version
        self.ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.garbage: str | None = None
        self.refused: str | None = None  # why a listing was refused before the SDK read it
        self.received = Received()  # what came back over HTTP that was not an MCP answer
        self.waiting_until = 0.0  # while the user is asked to authorize (time.monotonic)
        self._listener: Any = None  # OAuth's loopback redirect (oauth_redirect.py)
        self._stop = asyncio.Event()
        self._scope: Any = None  # the anyio.CancelScope of the connection
        self._stderr: IO[bytes] | None = None
        if config.command is not None:  # closed by close_files, after the server has stopped
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115

    async def hold(self, startup: float) -> None:
        """Connect, hand the client to ``ready``, and stay connected until ``stop``."""
        import anyio

        try:
            with anyio.CancelScope(deadline=anyio.current_time() + startup) as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    client = await self._connect(stack)
                    scope.deadline = math.inf
                    self.ready.set_result(client)
                    await self._stop.wait()
        except Exception as exc:  # the SDK's errors, groups included: the waiter reports them
            if not self.ready.done():
                self.ready.set_exception(exc)
        if not self.ready.done():
            self.ready.set_exception(StartTimeout(f"did not start within {startup:g} s"))

    def stop(self) -> None:
        """End the connection (on the loop's thread): gently once started, else cancel."""
        self._stop.set()
        if not self.ready.done() and self._scope is not None:
            self._scope.cancel()

    def wait_ready(self, limit: float) -> Any:
        """The started client (from another thread), waited for ``limit`` seconds, and
        longer while the user is asked to authorize (``pause_startup``)."""
        end = time.monotonic() + limit
        while True:
            try:
                return self.ready.result(max(end, self.waiting_until) - time.monotonic())
            except concurrent.futures.TimeoutError:
                if self.waiting_until <= time.monotonic():
                    raise

    def pause_startup(self, seconds: float) -> None:
        """Give the start ``seconds`` more (on the loop's thread): a user is authorizing."""
        self.waiting_until = time.monotonic() + seconds
        if self._scope is not None:
            self._scope.deadline = max(self._scope.deadline, self._scope_now() + seconds)

    def _scope_now(self) -> float:
        import anyio

        return anyio.current_time()

    def close_files(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()

    def stderr_size(self) -> int:
        """How much the server has written to stderr so far (a mark for ``stderr_tail``)."""
        if self._stderr is None or self._stderr.closed:
            return 0
        return os.fstat(self._stderr.fileno()).st_size

    def stderr_tail(self, since: int = 0) -> str:
        """The last line the server wrote to stderr after ``since`` (a traceback's last line,
        usually), or the last line of all when it wrote nothing since."""
        if self._stderr is None or self._stderr.closed:
            return ""
        size = self.stderr_size()
        start = since if since < size else 0
        self._stderr.seek(max(start, size - TAIL_BYTES))
        text = self._stderr.read().decode("utf-8", errors="replace")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        tail = lines[-1] if lines else ""
        return tail if len(tail) <= STDERR_TAIL else "..." + tail[-STDERR_TAIL:]

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from mcp import Client
        from mcp_types import Implementation

        elicit = self.elicit
        client = Client(
            self._transport(stack),
            message_handler=self._on_message,
            cache=None,
            mode=self.mode,
            client_info=Implementation(name="reactloop", version=__version__),
            elicitation_callback=None if elicit is None else sdk_callback(elicit, self.config.name),
        )
        return await stack.enter_async_context(client)

    def _transport(self, stack: AsyncExitStack) -> Any:
        config = self.config
        auth, self._listener = oauth_for(config, self.pause_startup)
        if config.url is not None and config.sse:
            from mcp.client.sse import sse_client

            # the SSE stream is idle between calls: the limits here bound every request
            return sse_client(
                config.url,
                headers=dict(config.headers) or None,
                timeout=config.startup_timeout,
                sse_read_timeout=SSE_IDLE_SECONDS,
                auth=auth,
            )
        if config.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=dict(config.headers) or None, auth=auth)
            http.event_hooks["response"].append(self.received.hook)
            stack.push_async_callback(http.aclose)
            return streamable_http_client(config.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters

        assert config.command is not None and self._stderr is not None
        env = dict(config.env) if config.env is not None else None
        command, args = _reaped(config.command, list(config.args), env)
        parameters = StdioServerParameters(command=command, args=args, env=env, cwd=config.cwd)
        return stdio_client(parameters, cast(TextIO, self._stderr), self._refuse)

    def _refuse(self, why: str) -> None:
        self.refused = why

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception) and self.garbage is None:
            self.garbage = _garbage_text(message)


def _reaped(command: str, args: list[str], env: dict[str, str] | None) -> tuple[str, list[str]]:
    """The server's command line under a reaper (``reaper``: nothing it starts outlives it).

    A command that cannot be found is left as it is, for the SDK to report as before.
    """
    if sys.platform != "linux":
        return command, args
    from mcp.client.stdio import get_default_environment

    path = (get_default_environment() | (env or {})).get("PATH", os.defpath)  # as the SDK's
    found = shutil.which(command, path=path) if os.sep not in command else command
    if found is None:
        return command, args
    first, *rest = reaper_argv(command, args)
    return first, rest


def _garbage_text(exc: Exception) -> str:
    if isinstance(exc, NotUTF8):  # its bytes, as Python writes them
        shown = repr(exc.line)
        return shown if len(shown) <= 80 else shown[:77] + "..."
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            shown = repr(first.get("input", ""))
            return shown if len(shown) <= 80 else shown[:77] + "..."
    return describe_exception(exc)[:80]
