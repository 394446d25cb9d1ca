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


ERROR_KINDS = (
    "auth",  # the key is missing, wrong or not allowed (401, 403)
    "not_found",  # no such model or endpoint (404)
    "rate_limit",  # too many requests now (429)
    "quota",  # out of credit or quota (402, or a 429 that says so)
    "context_length",  # the history outgrew the model's context: the run's own doing
    "bad_request",  # any other 4xx: the request was refused
    "server",  # 5xx, overloaded
    "timeout",  # no (complete) reply in time
    "connection",  # the server could not be reached, or the connection broke off
    "bad_reply",  # a reply that cannot be read as a turn
    "internal",  # a bug of an adapter or of reactloop
    "other",
)
"""What ``ModelError.kind`` (and ``RunResult.error_kind``) can be."""

_CONTEXT_LENGTH = (
    "context_length",
    "maximum context length",
    "context window",
    "prompt is too long",
    "context size",
)


class ModelError(ReactLoopError):
    """A model call failed. ``retryable`` tells whether trying again may help; ``kind`` is one
    of ``ERROR_KINDS``."""

    def __init__(self, message: str, *, retryable: bool = False, kind: str = "other") -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = kind


class ProviderError(ModelError):
    """An HTTP provider answered with an error; ``retry_after`` is the wait it asked for (s).
    ``kind`` is worked out from the status, the code and the message unless given."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        kind: str | None = None,
    ) -> None:
        found = kind or provider_error_kind(status, code, message)
        super().__init__(message, retryable=retryable, kind=found)
        self.status = status
        self.code = code
        self.retry_after = retry_after


def provider_error_kind(status: int | None, code: str | None, message: str) -> str:
    """The ``ERROR_KINDS`` entry of an HTTP provider's error answer."""
    text = f"{code or ''} {message}".lower()
    if status == 413 or any(marker in text for marker in _CONTEXT_LENGTH):
        return "context_length"
    if status in (401, 403):
        return "auth"
    if status == 402 or "insufficient_quota" in text:
        return "quota"
    if status == 429:
        return "quota" if "quota" in text or "billing" in text else "rate_limit"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    if status is not None and status >= 500:
        return "server"
    return "other"


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
