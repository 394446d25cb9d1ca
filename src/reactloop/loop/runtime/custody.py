"""A run with a time limit goes on a thread of its own; the caller's thread gives up at the limit.

Handing every sync tool call to a worker thread, so that the limit could abandon it, cost a
thread switch each way per call (more than the rest of a step on a 2-vCPU VM), and an async
tool run by the loop's own thread could block it, and the run, for as long as it liked. Here
the roles turn round: ``run_in_custody`` hands the whole run to a run thread (one hand-off a
run), and the caller's thread waits. The run thread runs tools inline (sync ones, and async
ones on its own event loop), each call inside a *region* (``Custody.enter_tools`` …
``leave``), and it waits on model calls and on the approver inside another
(``enter_waiting``). When the deadline passes while the run thread is in a tool's region, or
Ctrl-C comes, or the run is cancelled, the waiting thread *takes custody* of the run: it
answers the region's calls as given up on, writes the ``stop`` and returns the ``RunResult``
(``RunLoop.take_over``). The run thread is left behind with its tool; when the tool returns,
``leave`` raises ``RunTaken``, which ends that thread without a word: the late result is
discarded, and nothing of the run is touched again.

Graces, for what ends itself: a waiting region is taken ``MODEL_GRACE`` after the deadline
(an HTTP adapter ends its call at the deadline, with a better message) or at once on Ctrl-C
(a question to the approver on a terminal); a bounded tool (``bash``: its command killed at
the deadline) gets ``OWN_END_GRACE``, async tools ``ASYNC_GRACE``, and once their loop has
cancelled them (it is not blocked), the second it gives them to clean up.

A region is left under one lock (well under a microsecond a call), so exactly one of the two
threads goes on with the run. What cannot be stopped: a C call that holds the GIL (no other
thread runs until it returns; then the run ends at once and the result, late, is discarded)
and the abandoned thread itself (Python cannot kill a thread; it runs on until its tool
returns). See docs/reliability.md.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from reactloop.limits import StopReason
from reactloop.loop.runtime.workers import Workers
from reactloop.result import RunResult, Stop
from reactloop.support.cancel_event import CancelEvent
from reactloop.tools.context import run_deadline_scope
from reactloop.tools.prepared import PreparedCall

T = TypeVar("T")

# seconds past the deadline before a model call still going is given up on: more than any
# adapter takes to end its own (the embedded model's process is given 2 s to stop by itself)
MODEL_GRACE = 3.0
OWN_END_GRACE = 1.0  # the same for a tool that ends itself at the deadline (``Tool.bounded``)
ASYNC_GRACE = 0.25  # for async tools, whose event loop cancels them at the deadline if it can
_SLICE = 0.05  # how often the waiting thread looks, where it must (``_wait_for``)
_IDLE_THREADS = 8  # run threads kept waiting for the next run

TOOLS_OUTLASTED = "the time limit ran out while tools ran"

_HARNESS, _TOOL, _WAITING, _TAKEN = 0, 1, 2, 3


class RunTaken(BaseException):
    """Raised in the run thread when it leaves a region after the waiting thread took the
    run: not an ``Exception``, so that no handler on the way mistakes it for an error."""


class Custody:
    """Which thread goes on with one run: its own, or (once taken) the waiting thread."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self._lock = threading.Lock()
        self._state = _HARNESS
        self._grace = 0.0
        self.calls: Sequence[PreparedCall] = ()  # the calls of the tool region
        self.waiting_on = ""  # what the waiting region waits for ("the model call")
        self.in_tools = False  # once taken: whether from a tool's region

    def enter_tools(self, calls: Sequence[PreparedCall], grace: float = 0.0) -> None:
        """The run thread runs the code of these calls from now on; they are given up on
        ``grace`` seconds after the deadline (time for them to end themselves, when they can)."""
        self.calls = calls
        self._grace = grace
        self._state = _TOOL

    def hold_for(self, seconds: float) -> None:
        """The calls are ending by themselves (cancelled async tools): wait ``seconds`` more."""
        self._grace = max(self._grace, seconds + ASYNC_GRACE)

    def enter_waiting(self, what: str) -> None:
        """The run thread waits on ``what`` (a model call, the approver) from now on."""
        self.waiting_on = what
        self._state = _WAITING

    def guarded(self, callback: Callable[[str], None]) -> Callable[[str], None]:
        """``callback`` that raises ``RunTaken`` once the run is taken: a model call left
        behind prints nothing more (a streamed reply to the console)."""

        def call(text: str) -> None:
            if self._state == _TAKEN:
                raise RunTaken
            callback(text)

        return call

    def leave(self) -> None:
        """Back in the harness; ``RunTaken`` if the run was taken meanwhile."""
        with self._lock:
            if self._state == _TAKEN:
                raise RunTaken
            self._state = _HARNESS

    def take(self, *, interrupted: bool, cancelled: bool) -> Stop | None:
        """Take the run if its thread is in a region that is due to be given up on; how the
        run then stops."""
        now = time.monotonic()
        deadline = self.deadline
        with self._lock:
            state = self._state
            if state == _TOOL:
                over = deadline is not None and now >= deadline + self._grace
                due = interrupted or cancelled or over
            elif state == _WAITING:  # a Ctrl-C the run's guard turned into a cancel counts too
                over = deadline is not None and now >= deadline + MODEL_GRACE
                due = interrupted or cancelled or over
            else:
                return None
            if not due:
                return None
            self._state = _TAKEN
            self.in_tools = state == _TOOL
        return _taken_stop(state == _TOOL, self.waiting_on, interrupted or cancelled)


class Drivable(Protocol):
    """What ``run_in_custody`` needs of a run (``RunLoop``)."""

    def drive(self) -> RunResult: ...

    def take_over(self, calls: Sequence[PreparedCall], stop: Stop) -> RunResult: ...


_LOCAL = threading.local()  # ``custody``: that of the run this thread drives
_THREADS = Workers("reactloop-run-limited", max_idle=_IDLE_THREADS)
os.register_at_fork(after_in_child=_THREADS.forget_threads)


def ready() -> None:
    """A run thread waiting for the next run with a time limit (``Agent(...)`` has one ready)."""
    _THREADS.ready()


def current() -> Custody | None:
    """The custody of the run this thread drives, if it runs under ``run_in_custody``."""
    custody: Custody | None = getattr(_LOCAL, "custody", None)
    return custody


def waiting(what: str, deadline: float | None, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a waiting region on ``what`` (the approver's question), when the
    run has a time limit and so a custody: Ctrl-C or the limit can then end the wait."""
    custody = None if deadline is None else current()
    if custody is None:
        return function(*args)
    custody.enter_waiting(what)
    try:
        return function(*args)
    finally:
        custody.leave()


class _Outcome:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.wake = threading.Event()  # set with ``done``, and by a cancel (``CancelEvent``)
        self.value: RunResult | None = None
        self.error: BaseException | None = None

    def finish(self) -> None:
        self.done.set()
        self.wake.set()


def _drive(run: Drivable, custody: Custody, outcome: _Outcome) -> None:
    _LOCAL.custody = custody
    try:
        with run_deadline_scope(custody.deadline):  # for the run: its tools read it inline
            outcome.value = run.drive()
    except RunTaken:  # the waiting thread finished the run: this thread just ends
        return
    except BaseException as exc:  # handed to the waiting thread
        outcome.error = exc
    finally:
        _LOCAL.custody = None
    outcome.finish()


def run_in_custody(run: Drivable, deadline: float | None, cancel: threading.Event) -> RunResult:
    """``run.drive()`` on a run thread, given up on as the module docstring says."""
    custody = Custody(deadline)
    outcome = _Outcome()
    _THREADS.start(_drive, run, custody, outcome)
    if isinstance(cancel, CancelEvent) and not _on_main_thread():
        with cancel.waking(outcome.wake):  # a cancel wakes this thread: no need to look for it
            return _wait_for(run, custody, outcome, cancel, woken=True)
    return _wait_for(run, custody, outcome, cancel, woken=False)


def _wait_for(
    run: Drivable, custody: Custody, outcome: _Outcome, cancel: threading.Event, *, woken: bool
) -> RunResult:
    """The waiting thread's part: sleep until the run ends, is cancelled or is due to be taken.
    It looks every ``_SLICE`` s only where something may come unannounced: unless a cancel
    wakes it (``woken``: not on the main thread, where a Ctrl-C the kernel gave another thread
    is only seen by looking), after a cancel, and past the deadline (until the grace of the
    region the run is in is over)."""
    deadline = custody.deadline
    interrupted = False
    while True:
        try:
            if _slept(outcome, deadline, not woken or cancel.is_set()):
                break
            stop = custody.take(interrupted=interrupted, cancelled=cancel.is_set())
        except KeyboardInterrupt:  # Ctrl-C: the run stops ``cancelled``
            interrupted = True
            cancel.set()
            stop = custody.take(interrupted=True, cancelled=True)
        if stop is not None:
            return run.take_over(custody.calls if custody.in_tools else (), stop)
    if outcome.error is not None:
        raise outcome.error
    assert outcome.value is not None
    return outcome.value


def _slept(outcome: _Outcome, deadline: float | None, looking: bool) -> bool:
    """Sleep as ``_wait_for`` says; whether the run ended."""
    left = None if deadline is None else deadline - time.monotonic()
    if looking or (left is not None and left <= 0):
        return outcome.done.wait(_SLICE if left is None or left <= 0 else min(left, _SLICE))
    outcome.wake.wait(left)
    return outcome.done.is_set()


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _taken_stop(in_tools: bool, waiting_on: str, cancelled: bool) -> Stop:
    """How a run taken from its thread stops: from a tool's region or a waiting one."""
    if cancelled:
        error = "interrupted while a tool ran" if in_tools else f"interrupted during {waiting_on}"
        return Stop(StopReason.CANCELLED, None, error)
    if in_tools:
        return Stop(StopReason.TIMEOUT, None, TOOLS_OUTLASTED)
    error = f"{waiting_on} was still going {MODEL_GRACE:g} s after the time limit"
    return Stop(StopReason.TIMEOUT, None, error)


def late(deadline: float | None) -> bool:
    """Whether a result that comes now came after ``deadline``."""
    return deadline is not None and time.monotonic() > deadline
