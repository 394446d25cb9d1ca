"""What a tool may know of the run it serves: ``ToolContext`` (given to the families when they
are built), the run's deadline (``run_deadline_scope`` tells the tools that honour it, ``bash``
and ``search``, when the run must end, so that none of them outlives the run's time limit) and
the id of the call a tool function serves (``current_call_id``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reactloop.sandbox.command import Mode
    from reactloop.sandbox.rlimits import ResourceLimits


_RUN_DEADLINE: ContextVar[float | None] = ContextVar("reactloop_run_deadline", default=None)


def run_deadline() -> float | None:
    """When the current run must end (``time.monotonic()``), or None when it has no limit."""
    return _RUN_DEADLINE.get()


@contextlib.contextmanager
def run_deadline_scope(deadline: float | None) -> Iterator[None]:
    """Run a tool call with ``run_deadline()`` set (in the thread that runs the tool)."""
    token = _RUN_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _RUN_DEADLINE.reset(token)


# Set by ``Toolbox.invoke`` around each call (``set``/``reset``: 0.1 µs, a tenth of a
# context manager's cost, on every call of every run).
CURRENT_CALL: ContextVar[str | None] = ContextVar("reactloop_current_call", default=None)


def current_call_id() -> str | None:
    """The id of the call the current tool function serves, or None outside a call: an
    agent tool names its child's record by it."""
    return CURRENT_CALL.get()


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What tool families may need to know about the run they serve.

    ``sandbox_mode``, ``bash_limits`` and ``bash_max_output_chars`` are the ``bash`` family's;
    ``extra`` is for families of the user's own. The same settings given in ``extra`` under
    their names (before they were fields) are read into the fields."""

    notes: Path | None = None
    workspace: Path | None = None
    read_only: bool = False
    output_dir: Path | None = None
    sandbox_mode: Mode = "auto"
    bash_limits: ResourceLimits | None = None
    bash_max_output_chars: int = 3000
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _CONTEXT_FIELDS_ONCE_EXTRA:
            if name in self.extra and getattr(self, name) == _CONTEXT_DEFAULTS[name]:
                object.__setattr__(self, name, self.extra[name])


_CONTEXT_FIELDS_ONCE_EXTRA = ("sandbox_mode", "bash_limits", "bash_max_output_chars")
_CONTEXT_DEFAULTS: dict[str, Any] = {
    "sandbox_mode": "auto",
    "bash_limits": None,
    "bash_max_output_chars": 3000,
}
