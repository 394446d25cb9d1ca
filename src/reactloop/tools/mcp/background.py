"""``BackgroundLoop``: one asyncio event loop on a daemon thread, owned by an MCP client.

The MCP SDK is async (anyio); reactloop's tools are plain sync callables that may run on any
thread. Every coroutine of the SDK runs on this one loop, so its cancel scopes are entered and
left in the task that made them — the cause of anyio's "cancel scope in a different task"
errors is gone by construction. Each wait from a tool's thread is bounded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_GRACE = 0.5  # beyond a coroutine's own limit, for it to unwind before the caller gives up


class LoopTimeout(TimeoutError):
    """The coroutine did not finish within the caller's wait; it has been cancelled."""


class BackgroundLoop:
    def __init__(self, name: str = "reactloop-mcp") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._closed = False
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._closed:
            coroutine.close()
            raise RuntimeError("the MCP client is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """The coroutine's result; ``LoopTimeout`` after ``timeout`` (plus a short grace for
        a coroutine that enforces the same limit itself). Ctrl-C cancels it and propagates."""
        future = self.submit(coroutine)
        try:
            return future.result(max(timeout, 0.0) + _GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise LoopTimeout(f"no answer within {timeout:g} s") from None
        except KeyboardInterrupt:
            future.cancel()
            raise

    def close(self, timeout: float = 2.0) -> None:
        """Cancel what still runs, stop the loop and end its thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_cancel_all(timeout), self._loop).result(timeout + 1)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._loop.close()


async def _cancel_all(timeout: float) -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=timeout)
