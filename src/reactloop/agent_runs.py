"""One run of an ``Agent``: its loop, made from the agent's settings and what the run was given
(the task, the history it continues, a journal and observers of its own), or its journal
resumed; and the cancel events of the agent's runs under way.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import UsageError
from reactloop.journal.events import Observer
from reactloop.loop.settings import RunSettings
from reactloop.messages import Message
from reactloop.result import RunResult
from reactloop.support.cancel_event import CancelEvent
from reactloop.support.text import text_problem

if TYPE_CHECKING:
    from reactloop.limits import Limits
    from reactloop.loop.run_loop import RunLoop

Prior = RunResult | Sequence[Message] | None


class RunCancels:
    """The cancel events of an agent's runs: ``main`` for ``run`` and ``resume`` (each clears
    it), one of its own for each ``arun``, ``astream`` and ``aresume`` (set when its task is
    cancelled)."""

    def __init__(self) -> None:
        self.main = CancelEvent()
        self._own: set[threading.Event] = set()
        self._lock = threading.Lock()

    def set_all(self) -> None:
        self.main.set()
        with self._lock:
            for event in self._own:
                event.set()

    def any_set(self) -> bool:
        with self._lock:
            own = list(self._own)
        return self.main.is_set() or any(event.is_set() for event in own)

    def new(self) -> threading.Event:
        event = CancelEvent()
        with self._lock:
            self._own.add(event)
        return event

    def drop(self, event: threading.Event) -> None:
        with self._lock:
            self._own.discard(event)


def load_loop(limits: Limits) -> None:
    """Load what every run needs and ``import reactloop`` does not: the loop's modules, and
    ``signal`` (a run takes Ctrl-C); with a time limit, have a run thread waiting. Called
    when an ``Agent`` is built, so that its first run costs about what a later one does."""
    import signal  # noqa: F401  (``support/interrupts.py`` imports it where it is used)

    from reactloop.loop.run_loop import RunLoop  # noqa: F401
    from reactloop.loop.runtime.custody import ready

    if limits.max_seconds is not None:
        ready()


def run_loop(
    settings: RunSettings,
    task: str,
    history: Prior,
    journal: Observer | None,
    observers: Sequence[Observer] | None,
    cancel: threading.Event,
) -> RunLoop:
    """The loop of one run of ``task``: ``journal`` and ``observers`` (None: the agent's) and
    ``cancel`` replace the agent's ``settings``; ``history`` is the run it continues."""
    from reactloop.loop.run_loop import RunLoop  # loaded by ``load_loop`` already

    if type(task) is str and (problem := text_problem(task)) is not None:
        raise UsageError(problem)  # no model takes it: refused before the run starts
    if journal is not None or observers is not None or cancel is not settings.cancel:
        settings = dataclasses.replace(
            settings,
            journal=settings.journal if journal is None else journal,
            observers=settings.observers if observers is None else tuple(observers),
            cancel=cancel,
        )
    if history is None:
        return RunLoop(settings, task)
    if isinstance(history, RunResult):
        return RunLoop(settings, task, history.history, history.trace)
    return RunLoop(settings, task, tuple(history))


def resumed_run(
    settings: RunSettings, trace: str | Path, cancel: threading.Event, **options: Any
) -> RunResult:
    """The run journaled in ``trace``, continued (``reactloop.resume``) with ``cancel``."""
    from reactloop.resume.resume_run import resume_run  # loads the loop, as a first run does

    return resume_run(dataclasses.replace(settings, cancel=cancel), trace, **options)
