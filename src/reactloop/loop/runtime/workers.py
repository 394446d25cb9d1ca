"""``Workers``: the daemon threads that run sync tools under a deadline (``ToolExecutor``) and
runs (``custody.py``, ``async_runner.py``), and ``wait_all``, the wait for their calls.

``submit`` gives a ``concurrent.futures.Future`` (a turn's concurrent calls); ``start`` gives
none, for a job that hands its outcome on itself (a run): a run that makes no concurrent call
does not load ``concurrent.futures`` and the ``logging`` it imports (a fifth of the loop's
import time)."""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future

    _Job = tuple[Future[Any] | None, contextvars.Context, Callable[..., Any], tuple[Any, ...]]


_SLICE = 0.05  # how often a wait wakes, to see a Ctrl-C or a cancel


class Workers:
    """Daemon threads that run jobs, started as needed and reused. Unlike the threads of a
    ``ThreadPoolExecutor``, a thread abandoned at a deadline does not hold up the process's
    exit, and it is never given another job."""

    def __init__(self, name: str = "reactloop-tool", *, max_idle: int | None = None) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._closed = False
        self._name = name
        self._max_idle = max_idle  # more threads than this waiting for jobs: the next one ends

    def forget_threads(self) -> None:
        """In a forked child: the parent's threads do not exist here; start afresh."""
        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """``function(*args)`` on a worker thread, in a copy of this thread's context; its
        value or exception in the future."""
        from concurrent.futures import Future

        future: Future[Any] = Future()
        self._put((future, contextvars.copy_context(), function, args))
        return future

    def start(self, function: Callable[..., None], *args: Any) -> None:
        """``function(*args)`` on a worker thread, as ``submit``, for a function that hands on
        its own outcome and raises nothing (what it raised would end its thread)."""
        self._put((None, contextvars.copy_context(), function, args))

    def ready(self) -> None:
        """Have a thread waiting for the next job: started now when none is, so that the
        first job does not wait for a thread to start."""
        with self._lock:
            if self._idle or self._closed:
                return
            self._idle += 1
        threading.Thread(target=self._work, name=self._name, daemon=True).start()

    def _put(self, job: _Job) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1
        if start:
            threading.Thread(target=self._work, name=self._name, daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, context, function, args = job
            if future is None:
                context.run(function, *args)
            elif future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(function, *args))
                except BaseException as exc:  # handed to the waiting thread
                    future.set_exception(exc)
            with self._lock:
                if self._closed or (self._max_idle is not None and self._idle >= self._max_idle):
                    return
                self._idle += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._jobs.put(None)


def wait_all(
    futures: Sequence[Future[Any]],
    deadline: float | None,
    cancel: threading.Event | None = None,
) -> bool:
    """Wait until every future is done or the deadline passes (``concurrent.futures.wait``
    costs twice as much per call: this is on every step's path). The wait wakes every
    ``_SLICE`` seconds: a Ctrl-C that the kernel gave to a worker thread is only seen by the
    main thread when it wakes. True when ``cancel`` was set before all were done."""
    from concurrent.futures import CancelledError

    for future in futures:
        while not future.done():
            if cancel is not None and cancel.is_set():
                return True
            timeout = _SLICE if deadline is None else min(_SLICE, deadline - time.monotonic())
            if timeout <= 0:
                return False
            with contextlib.suppress(CancelledError, TimeoutError):
                future.exception(timeout)
    return False
