"""Ctrl-C during a run: it cancels the run, and never lands in the middle of its bookkeeping.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be, so without care a
Ctrl-C lands between "the tool returned" and "its result is recorded", or in the middle of the
finishing step (the ``stop`` event never written). While a run goes on the main thread,
``RunInterrupts`` stands in for the SIGINT handler:

- inside a region marked with ``interruptibly`` (the model call, a sync tool on the loop's
  thread, the approver's question), a Ctrl-C raises ``KeyboardInterrupt`` there, as before,
  so that a slow call stops at once;
- anywhere else it sets the run's cancel event, and the loop stops at its next safe point
  (before a tool starts, while it waits for one, before the next model call), ``cancelled``;
- a further Ctrl-C while the run ends does nothing more: the run still ends with its
  ``stop`` and its ``RunResult``.

It stands in only for Python's own handler (``signal.default_int_handler``) or one that says
it defers to runs (``defers_to_runs = True``, as ``reactloop chat``'s): a program with a SIGINT
handler of its own keeps it. Other threads never get a SIGINT from Python.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from types import FrameType

# ``signal`` is imported by the first run, not by ``import reactloop`` (start-up time).
T = TypeVar("T")


class NotStarted(KeyboardInterrupt):
    """Raised by ``interruptibly`` instead of calling a function when a Ctrl-C came first."""


class RunInterrupts:
    """The SIGINT handler of one run on the main thread (see the module's docstring)."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous
        self.thread = threading.get_ident()
        self.depth = 0  # how deep the main thread is in ``interruptibly`` regions
        self.pressed = False  # a Ctrl-C came during the run
        self.cancel: threading.Event | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.pressed = True
        if self.cancel is not None:
            self.cancel.set()
        if self.depth and (frame is None or frame.f_code is not _INTERRUPTIBLY):
            raise KeyboardInterrupt  # inside the call itself, not in the region's own lines

    def watch(self, cancel: threading.Event) -> None:
        """The event a Ctrl-C sets (set now, when one came already)."""
        self.cancel = cancel
        if self.pressed:
            cancel.set()

    def release(self) -> None:
        """Give SIGINT back to the handler the run found. A Ctrl-C the C handler has noted but
        Python has not handled yet is handled first (on entering this function), by the run."""
        import signal

        global _active
        _active = None
        signal.signal(signal.SIGINT, self.previous)


_active: RunInterrupts | None = None


def guard_run() -> RunInterrupts | None:
    """Take SIGINT for a run; None when the run is not on the main thread, or the program
    has a SIGINT handler of its own, or a run (the one that runs this one) already has it."""
    import signal

    global _active
    if _active is not None or threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler and not getattr(
        previous, "defers_to_runs", False
    ):
        return None
    guard = RunInterrupts(previous)
    signal.signal(signal.SIGINT, guard)
    _active = guard
    return guard


def interruptibly(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, which a Ctrl-C may interrupt (``KeyboardInterrupt``).

    A Ctrl-C before the call starts raises ``NotStarted``, and one after it returned, in this
    function's own lines, is left to the run's safe points: the caller never sees a finished
    call as interrupted."""
    guard = _active
    if guard is None or guard.thread != threading.get_ident():
        return function(*args, **kwargs)
    guard.depth += 1
    try:
        if guard.pressed:
            raise NotStarted
        return function(*args, **kwargs)
    finally:
        guard.depth -= 1


_INTERRUPTIBLY = interruptibly.__code__
