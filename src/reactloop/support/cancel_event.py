"""``CancelEvent``: a run's cancel, a ``threading.Event`` that also wakes whoever waits on the run.

A thread that waits for a run to end (``loop/runtime/custody.py``) must see a cancel at once.
It used to look every 50 ms: 20 wake-ups a second a run, and at an eval's hundreds of runs a
process each of those wake-ups fought the runs' threads for the GIL (at 256 runs a process,
three in four of the process's context switches; docs/benchmarks.md). Now it hands the cancel
an event of its own to set (``waking``), and sleeps until the run ends, the deadline, or that.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CancelEvent(threading.Event):
    """A ``threading.Event`` whose ``set`` also sets the events given to ``waking``."""

    def __init__(self) -> None:
        super().__init__()
        self._wakers: set[threading.Event] = set()
        self._wakers_lock = threading.Lock()

    def set(self) -> None:
        super().set()
        with self._wakers_lock:
            wakers = list(self._wakers)
        for waker in wakers:
            waker.set()

    @contextmanager
    def waking(self, waker: threading.Event) -> Iterator[None]:
        """While inside, a ``set`` sets ``waker`` too (set at once when this is set already)."""
        with self._wakers_lock:
            self._wakers.add(waker)
        if self.is_set():
            waker.set()
        try:
            yield
        finally:
            with self._wakers_lock:
                self._wakers.discard(waker)
