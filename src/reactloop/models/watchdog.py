"""One thread that shuts connections down at their deadlines, for the whole process.

``ReplyDeadline`` guards every reply's connection with the run's deadline; a timer thread per
reply would cost a thread start per model call (and, at an evaluation's concurrency, many idle
threads). Here every guard is an entry in one heap served by one daemon thread, started on
first use (and again in a forked child, where the parent's thread does not exist).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time

_COMPACT_AFTER = 64  # cancelled entries tolerated before the heap is rebuilt without them


class Guard:
    """One connection to shut down at a deadline, unless ``cancel`` comes first."""

    __slots__ = ("_watchdog", "cancelled", "connection")

    def __init__(self, connection: socket.socket, watchdog: Watchdog) -> None:
        self.connection = connection
        self.cancelled = False
        self._watchdog = watchdog

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self._watchdog.forget_one()


class Watchdog:
    """The heap of guards and the thread that serves it."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._heap: list[tuple[float, int, Guard]] = []
        self._order = itertools.count()
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def guard(self, connection: socket.socket, deadline: float) -> Guard:
        """Shut ``connection`` down at ``deadline`` (a ``time.monotonic()`` value)."""
        entry = Guard(connection, self)
        with self._condition:
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, daemon=True, name="reactloop-reply-deadlines"
                )
                self._thread.start()
            elif self._heap[0][2] is entry:
                self._condition.notify()  # a new earliest deadline
        return entry

    def forget_one(self) -> None:
        with self._condition:
            self._cancelled += 1
            if self._cancelled > _COMPACT_AFTER and self._cancelled * 2 > len(self._heap):
                self._heap = [item for item in self._heap if not item[2].cancelled]
                heapq.heapify(self._heap)
                self._cancelled = 0

    @property
    def pending(self) -> int:
        """Guards still waiting for their deadline (cancelled ones not counted)."""
        with self._condition:
            return sum(not item[2].cancelled for item in self._heap)

    def _serve(self) -> None:
        with self._condition:
            while True:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                    self._cancelled = max(self._cancelled - 1, 0)
                if not self._heap:
                    self._condition.wait()
                    continue
                delay = self._heap[0][0] - time.monotonic()
                if delay > 0:
                    self._condition.wait(delay)
                    continue
                _, _, entry = heapq.heappop(self._heap)
                entry.cancelled = True
                shut_down(entry.connection)


def shut_down(connection: socket.socket) -> None:
    """End every read waiting on ``connection`` now."""
    # The plain socket method, also for TLS: ``SSLSocket.shutdown`` would drop the SSL object
    # under the thread that is reading, which then fails with a ValueError, not a read error.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(connection, socket.SHUT_RDWR)


WATCHDOG = Watchdog()
