"""The pipes between the eval's driver and its worker processes, and why they cannot deadlock.

Each worker has two one-way pipes: *tasks* (driver → worker: ``RunEpisode``, ``Abandon``,
``Cancel``, ``Close``) and *results* (worker → driver: ``EpisodeDone``, ``Endpoints``; the
messages are ``worker_messages``'). Each end of each pipe belongs to one thread:

- the writing end to a ``Writer``: a thread that does nothing but send the messages put in its
  queue, in order (the driver has one per worker, each worker one);
- the reading end to a thread that never sends and never waits for anything but its pipe: in
  the driver a ``Reader`` (one per worker; it puts each message in the scheduler's inbox), in
  the worker its main thread.

``Writer.put`` and ``Reader``'s inbox never block (their queues have no bound; what they hold
is bounded by the episodes in flight, which the scheduler caps), and no lock is held across
a send. So a send that blocks on a full pipe waits only for that pipe's reader, and a reader
waits for nothing but data: there is no cycle of waits, whatever the sizes of the messages.
(Before, one duplex pipe per worker: the driver blocked sending an episode and stopped
reading; the worker's callback thread, holding the worker's lock, blocked sending a record;
the worker's reading thread waited for that lock: issue 40.)

The driver's scheduler waits only on its inbox, each wait with a timeout. A send has a
bound: ``Writer.stuck`` says when one has waited longer than it (a reader that stopped
reading: a stopped or wedged process), and the driver then gives the worker up
(``ProcessBackend``); ``Writer.close`` waits for the last messages a bounded time.
"""

from __future__ import annotations

import queue
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from reactloop.support.pipe_messages import receive, send

WRITE_SECONDS = 60.0
"""How long the driver lets one message to a worker wait for the worker to read it before it
gives the worker up (its reading thread reads at once whenever it runs at all)."""
CLOSE_SECONDS = 30.0
"""How long a close waits for the other side's last messages."""
_END = object()


class Writer:
    """The one thread that writes ``connection``: ``put`` queues a message and returns."""

    def __init__(self, connection: Connection, name: str) -> None:
        self._connection = connection
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._since: float | None = None  # when the send under way began
        self.failed: BaseException | None = None  # the error that ended the writing
        self._thread = threading.Thread(target=self._write, name=name, daemon=True)
        self._thread.start()

    def put(self, message: Any) -> None:
        self._queue.put(message)

    def stuck(self, bound: float) -> bool:
        """Whether a send has waited more than ``bound`` seconds for the reader."""
        since = self._since
        return since is not None and time.monotonic() - since > bound

    def close(self, timeout: float | None = None) -> bool:
        """Send what is queued, then close the pipe; with ``timeout``, wait that long for it.
        True when everything was sent (in time)."""
        self._queue.put(_END)
        if timeout is not None:
            self._thread.join(timeout)
        return not self._thread.is_alive() and self.failed is None

    def _write(self) -> None:
        try:
            while (message := self._queue.get()) is not _END:
                self._since = time.monotonic()
                send(self._connection, message)
                self._since = None
        except (OSError, ValueError) as exc:  # the reader is gone
            self.failed = exc
        finally:
            self._since = None
            self._connection.close()  # here only: no other thread touches this end


class Reader:
    """The one thread that reads ``connection``: each message goes into ``inbox`` as
    ``(tag, message)``, then ``(tag, None)`` when the pipe ends (the writer closed it or died,
    or a message could not be read)."""

    def __init__(
        self, connection: Connection, tag: int, inbox: queue.SimpleQueue[Any], name: str
    ) -> None:
        self._connection = connection
        self._tag = tag
        self._inbox = inbox
        self.failed: BaseException | None = None  # what ended the reading, but the pipe's end
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                self._inbox.put((self._tag, receive(self._connection)))
        except EOFError:
            pass
        except Exception as exc:  # a broken pipe, or a message that does not unpickle
            self.failed = exc
        finally:
            self._connection.close()  # here only: no other thread touches this end
            self._inbox.put((self._tag, None))
