"""``Questions``: the run's channel for a question a tool asks the person during a call (an
MCP server's elicitation), and ``AwaitingAnswer``, raised when nobody can answer it now.

The loop sets the channel for the calls it runs (``asking``): ``emit`` writes the run's events
(the question and its answer go in the journal), ``answers`` holds the answers a person gave,
by call id (``reactloop approve --answer``, ``Agent.resume(decisions=...)``): a journal's
content reaches a server only as such an answer, never as a reason to start anything. A tool
whose question nobody can answer now (a deferred run) raises ``AwaitingAnswer``: the call gets
no result and the run stops ``awaiting_approval`` with it pending, as for an approval.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


class AwaitingAnswer(Exception):
    """The call asked a question nobody can answer now: it waits for a person."""


@dataclass(frozen=True)
class Questions:
    emit: Callable[..., None]
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


_CURRENT: ContextVar[Questions | None] = ContextVar("reactloop_questions", default=None)


def current_questions() -> Questions | None:
    """The channel of the run whose call this thread serves, or None outside a run."""
    return _CURRENT.get()


@contextlib.contextmanager
def asking(questions: Questions) -> Iterator[None]:
    token = _CURRENT.set(questions)
    try:
        yield
    finally:
        _CURRENT.reset(token)
