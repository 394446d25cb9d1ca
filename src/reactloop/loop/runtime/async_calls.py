"""Async tools on an event loop that the waiting thread runs itself.

Handing a call to a loop on another thread costs two thread switches, about 80 µs of CPU a call
on these machines; ``OwnLoop`` instead runs the executor's loop in the thread that waits for the
calls, for as long as they take, so that an async tool costs little more than a sync one. The
loop is the same for every call of a run (tools that keep state bound to it work) and is closed
with the run. A thread that already runs a loop (a sync ``Agent.run`` called from async code)
cannot run another: ``usable`` says so, and ``ToolExecutor`` then uses its loop thread.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from sys import get_asyncgen_hooks as _get_hooks
from sys import set_asyncgen_hooks as _set_hooks
from typing import TYPE_CHECKING, Any, TypeVar

from reactloop.loop.runtime.custody import current as current_custody

if TYPE_CHECKING:
    import asyncio
    from collections import deque
    from concurrent.futures import Future

T = TypeVar("T")

_SLICE = 0.05  # how often a wait looks at the cancel event
_CLEAN_UP_SECONDS = 1.0  # for cancelled calls to run their ``finally`` blocks


class OwnLoop:
    """One run's event loop for async tools, run by whichever thread waits for them."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._set_running: Callable[[asyncio.AbstractEventLoop | None], None] | None = None
        self._hooks: tuple[Callable[..., Any], Callable[..., Any]] | None = None
        self._task_type: type[asyncio.Task[Any]] | None = None
        self._ready: deque[asyncio.Handle] | None = None  # the loop's queue of steps to run

    @staticmethod
    def usable() -> bool:
        """Whether this thread can run the loop (it runs no event loop of its own now)."""
        asyncio = sys.modules.get("asyncio")  # not imported: no loop runs anywhere
        return asyncio is None or asyncio._get_running_loop() is None

    def run(
        self,
        coroutines: Sequence[Coroutine[Any, Any, Any]],
        deadline: float | None,
        cancel: threading.Event | None,
    ) -> tuple[list[asyncio.Task[Any]], set[asyncio.Task[Any]], bool]:
        """Run ``coroutines`` concurrently until every one is done, ``deadline`` (a
        ``time.monotonic()`` value) passes or ``cancel`` is set: their tasks, the ones that had
        not finished (now cancelled), and whether the wait was interrupted (``cancel``, Ctrl-C).
        """
        loop = self._get()
        task = self._task_type  # ``Task`` itself, not ``create_task``: no factory on this loop
        assert task is not None
        tasks = [task(coroutine, loop=loop) for coroutine in coroutines]
        watch: _Watch | None = None
        try:
            if self._first_steps(loop, tasks):
                return tasks, set(), False
            watch = _Watch(loop, tasks, deadline, cancel)
            loop.run_until_complete(tasks[0] if len(tasks) == 1 else _all_of(tasks))
        except KeyboardInterrupt:
            watch = watch or _Watch(loop, tasks, None, None)
            watch.stop(interrupted=True)
            self._settle(tuple(watch.stopped))
        except BaseException:  # the tasks' own outcomes are read from them, one by one
            pass
        finally:
            if watch is not None:
                watch.close()
        return tasks, set() if watch is None else watch.stopped, bool(watch and watch.interrupted)

    def _first_steps(self, loop: asyncio.AbstractEventLoop, tasks: list[asyncio.Task[Any]]) -> bool:
        """Take the first step of ``tasks``, just created, here and now, as the loop would
        (each in its task's context, the task current, the loop running for
        ``get_running_loop``, its async-generator hooks in place), without the loop's turn
        around them: an async tool that returns without waiting, or waits only for what is
        ready, is then done at the cost of a function call, as with Python 3.12's eager tasks,
        which 3.11 lacks. False, and nothing done, when the ready queue holds other steps
        than those (or the loop, uvloop's for one, has no such queue); True when all are done.
        """
        ready = self._ready
        if ready is None or len(ready) != len(tasks):
            return False
        assert self._hooks is not None and self._set_running is not None
        hooks = _get_hooks()
        _set_hooks(*self._hooks)
        self._set_running(loop)
        try:
            for _ in tasks:  # a step's own ``call_soon``s go to the queue's other end
                ready.popleft()._run()
        finally:
            self._set_running(None)
            _set_hooks(*hooks)
        return tasks[0].done() if len(tasks) == 1 else all(task.done() for task in tasks)

    def close(self) -> None:
        """Cancel what is still pending and close the loop."""
        loop, self._loop, self._ready = self._loop, None, None
        if loop is None:
            return
        import asyncio

        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        self._loop = loop
        self._settle(pending)
        self._loop = None
        with contextlib.suppress(RuntimeError):  # a loop still running elsewhere stays open
            loop.close()

    def _get(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            import asyncio
            import asyncio.events

            loop = self._loop = asyncio.new_event_loop()
            self._task_type = asyncio.Task
            if isinstance(loop, asyncio.BaseEventLoop):
                self._ready = loop._ready  # type: ignore[attr-defined]
                self._set_running = asyncio.events._set_running_loop
                self._hooks = (
                    loop._asyncgen_firstiter_hook,  # type: ignore[attr-defined]
                    loop._asyncgen_finalizer_hook,  # type: ignore[attr-defined]
                )
        return self._loop

    def _settle(self, tasks: Sequence[asyncio.Task[Any]]) -> None:
        """Let cancelled tasks run their clean-up, for a bounded time; a second Ctrl-C or a
        task that refuses to end leaves them as they are."""
        if not tasks or self._loop is None:
            return
        import asyncio

        with contextlib.suppress(BaseException):
            self._loop.run_until_complete(asyncio.wait(tasks, timeout=_CLEAN_UP_SECONDS))


def _all_of(tasks: Sequence[asyncio.Task[Any]]) -> asyncio.Future[list[Any]]:
    import asyncio

    return asyncio.gather(*tasks, return_exceptions=True)


class LoopThread:
    """An event loop on a thread of its own, for threads that cannot run ``OwnLoop``."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        import asyncio

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="reactloop-async-tools", daemon=True
            )
            self._thread.start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def close(self) -> None:
        """Cancel its tasks (for a second at most), stop the loop and end the thread."""
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None or thread is None:
            return
        import asyncio

        with contextlib.suppress(Exception):  # tasks that refuse to end stay on the thread
            asyncio.run_coroutine_threadsafe(_cancel_all(), loop).result(timeout=2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=2)
        if not thread.is_alive():
            loop.close()


async def _cancel_all() -> None:
    import asyncio

    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=1)


class _Watch:
    """Stops a run of tasks at its deadline or when ``cancel`` is set, looking every
    ``_SLICE`` seconds (a timer of the loop: nothing runs while the tools end in time)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        tasks: Sequence[asyncio.Task[Any]],
        deadline: float | None,
        cancel: threading.Event | None,
    ) -> None:
        self.loop, self.tasks, self.deadline, self.cancel = loop, tasks, deadline, cancel
        self.stopped: set[asyncio.Task[Any]] = set()
        self.interrupted = False
        self._poll: asyncio.TimerHandle | None = None
        self._give_up: asyncio.TimerHandle | None = None
        if deadline is not None or cancel is not None:
            self._check()

    def _check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            self.stop(interrupted=True)
            return
        left = None if self.deadline is None else self.deadline - time.monotonic()
        if left is not None and left <= 0:
            self.stop(interrupted=False)
            return
        wait = _SLICE if left is None else min(_SLICE, left)
        self._poll = self.loop.call_later(wait, self._check)

    def stop(self, *, interrupted: bool) -> None:
        """Cancel the tasks still running; the loop gives up on them a second later."""
        self.interrupted = self.interrupted or interrupted
        unfinished = {task for task in self.tasks if not task.done()}
        for task in unfinished - self.stopped:
            task.cancel()
        self.stopped |= unfinished
        if unfinished and self._give_up is None:  # a task that ignores it must not hold the run
            self._give_up = self.loop.call_later(_CLEAN_UP_SECONDS, self.loop.stop)
            custody = current_custody()
            if custody is not None:  # the loop is not blocked: let it end the tasks itself
                custody.hold_for(_CLEAN_UP_SECONDS)

    def close(self) -> None:
        for timer in (self._poll, self._give_up):
            if timer is not None:
                timer.cancel()
