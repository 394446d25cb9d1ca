"""The one exception tree of reactloop.

    ReactLoopError
    ├── UsageError           bad configuration from the user: unknown model spec, missing file
    │   └── MissingDependency    an optional extra is not installed (names the pip command)
    ├── ModelError           a model call failed; the run stops with ``model_error``
    │   └── ProviderError        an HTTP provider answered with an error (status, code, retryable)
    ├── ToolError            raised by a tool for an expected failure; becomes an error observation
    └── JournalError         a journal could not be read

The loop never lets an exception escape ``Agent.run``: model errors end the run with a stop
reason, tool errors become observations. Only bugs in user callbacks propagate.
"""

from __future__ import annotations


class ReactLoopError(Exception):
    """Base of every error reactloop raises on purpose."""


class UsageError(ReactLoopError):
    """The user asked for something that cannot work (bad spec, missing file, bad option)."""


class MissingDependency(UsageError):
    """An optional dependency is missing; the message names the pip command that adds it."""


class ModelError(ReactLoopError):
    """A model call failed. ``retryable`` tells whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class ProviderError(ModelError):
    """An HTTP provider answered with an error; ``retry_after`` is the wait it asked for (s)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status
        self.code = code
        self.retry_after = retry_after


class ToolError(ReactLoopError):
    """Raised inside a tool for an expected failure; the model sees only the message."""


class JournalError(ReactLoopError):
    """A journal file is missing, empty or not a reactloop journal."""


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` for any exception, even one whose ``__str__`` raises."""
    name = type(exc).__name__
    try:
        message = str(exc)
    except BaseException as inner:  # a hostile __str__, SystemExit included
        return f"{name} (its message cannot be shown: str() raised {type(inner).__name__})"
    return f"{name}: {message}" if message else name
