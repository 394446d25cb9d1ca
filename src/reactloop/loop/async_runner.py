"""Running the one, synchronous loop from ``asyncio``: no second, async copy of it.

A run started by ``Agent.arun`` or ``Agent.astream`` goes on a thread of its own, one of the
runs' daemon threads, reused from run to run (not the event loop's default executor, which a
service's other work shares, and whose size would cap the runs in flight), with the caller's
``contextvars`` (so an OpenTelemetry span current in the caller is the run's parent). The
awaiting task is woken through ``call_soon_threadsafe``. Cancelling the task sets the run's
cancel event, waits until the run has stopped (``cancelled``, its journal complete: the tools
still running are given up at once, a model call is waited for) and raises
``CancelledError`` on, as asyncio expects.

What is here is used from asyncio code, which has loaded ``asyncio`` already: each function
imports it itself, so that ``import reactloop`` does not load it (a third of its time).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from reactloop.journal.events import Event, Observer
from reactloop.loop.runtime.workers import Workers
from reactloop.result import RunResult

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
_IDLE_RUN_THREADS = 8  # kept waiting for the next run; more end when their run does


_RUN_THREADS = Workers("reactloop-run", max_idle=_IDLE_RUN_THREADS)
os.register_at_fork(after_in_child=_RUN_THREADS.forget_threads)  # a child has none of them


def in_thread(function: Callable[[], T]) -> asyncio.Future[T]:
    """``function()`` on a daemon thread of the runs' own (reused: starting one costs more
    than a short run's steps), in a copy of the caller's context; its value (or exception)
    as a future."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def target() -> None:
        try:
            value = function()
        except BaseException as exc:  # handed to the awaiting task
            _call_soon(loop, _set_exception, future, exc)
        else:
            _call_soon(loop, _set_result, future, value)

    _RUN_THREADS.start(target)  # which copies this context for the thread
    return future


async def settled(future: asyncio.Future[T], cancel: threading.Event) -> T:
    """The run's value; on cancellation, stop the run, wait for it, and re-raise."""
    import asyncio

    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        await _wait_out(future)
        raise


async def _wait_out(future: asyncio.Future[T]) -> None:
    import asyncio

    while not future.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.shield(future)


class RunStream:
    """The events of one run as they happen: ``async for event in agent.astream(task)``.

    The events are those the journal records, in order, ``run_start`` first and ``stop``
    last; ``result`` holds the ``RunResult`` once the iteration has ended. Leaving early
    (``break``) does not stop the run by itself: use ``async with agent.astream(task) as
    stream`` or ``await stream.aclose()``, which cancel it and wait until it has stopped.
    """

    def __init__(self, execute: Callable[[Observer], RunResult], cancel: threading.Event):
        import asyncio

        self._execute = execute
        self._cancel = cancel
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._future: asyncio.Future[RunResult] | None = None
        self.result: RunResult | None = None

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> Event:
        import asyncio

        future = self._future if self._future is not None else self._start()
        try:
            event = await self._queue.get()
        except asyncio.CancelledError:
            self._cancel.set()
            await _wait_out(future)
            raise
        if event is None:
            self.result = future.result()
            raise StopAsyncIteration
        return event

    def _start(self) -> asyncio.Future[RunResult]:
        import asyncio

        loop = asyncio.get_running_loop()
        queue = self._queue

        def observe(event: Event) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)

        future = self._future = in_thread(lambda: self._execute(observe))
        future.add_done_callback(lambda _: queue.put_nowait(None))
        return future

    async def aclose(self) -> None:
        """Cancel the run if it is still going, and wait until it has stopped."""
        if self._future is None or self._future.done():
            return
        self._cancel.set()
        await _wait_out(self._future)
        if not self._future.cancelled() and self._future.exception() is None:
            self.result = self._future.result()

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _call_soon(loop: asyncio.AbstractEventLoop, *args: object) -> None:
    with contextlib.suppress(RuntimeError):  # the event loop was closed meanwhile
        loop.call_soon_threadsafe(*args)  # type: ignore[arg-type]


def _set_result(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)


def _set_exception(future: asyncio.Future[T], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
