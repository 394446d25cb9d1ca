"""While a model call goes on, the console says so: ``waiting for the model: 20 s``.

A server that takes the request and never answers would otherwise leave the console silent
after ``Step 1`` for as long as the run's time limit (600 s by default). The line repeats every
``WAITING_EVERY`` seconds (a repeated line, not one rewritten in place: it reads the same in a
terminal, a log file and CI), until the call ends or its first streamed text arrives.
"""

from __future__ import annotations

import threading
import time

from rich.console import Console

WAITING_EVERY = 10.0  # seconds between two lines


class WaitingLine:
    """Prints the waiting line on a thread of its own between ``start`` and ``stop``."""

    def __init__(self, console: Console, every: float | None = None) -> None:
        self._console = console
        self._every = WAITING_EVERY if every is None else every
        self._lock = threading.Lock()  # no line after ``stop`` returns
        self._done: threading.Event | None = None

    def start(self) -> None:
        """A model call begins (its ``request`` event)."""
        done = threading.Event()
        with self._lock:
            if self._done is not None:
                self._done.set()
            self._done = done
        threading.Thread(
            target=self._tick, args=(done,), daemon=True, name="reactloop-waiting"
        ).start()

    def stop(self) -> None:
        """The call has ended, or its reply has begun to show."""
        with self._lock:
            if self._done is not None:
                self._done.set()
                self._done = None

    def _tick(self, done: threading.Event) -> None:
        started = time.monotonic()
        lines = 0
        while True:
            lines += 1
            waited = lines * self._every
            if done.wait(max(started + waited - time.monotonic(), 0.0)):
                return
            with self._lock:
                if done.is_set():
                    return
                self._console.print(f"  [dim]waiting for the model: {round(waited, 1):g} s[/]")
