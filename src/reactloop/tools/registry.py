"""Built-in tool families by name, for ``--tools a,b`` on the command line.

Each family is a module with ``tools(context) -> list[Tool]``; modules are imported only when
their family is asked for. ``run_deadline_scope`` tells the tools that honour it (``bash``,
``search``) when the run must end, so that none of them outlives the run's time limit.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError
from reactloop.tools.base import Tool

FAMILIES: dict[str, str] = {
    "calculator": "reactloop.tools.calculator:tools",
    "lookup": "reactloop.tools.lookup:tools",
    "files": "reactloop.tools.files:tools",
    "bash": "reactloop.tools.bash:tools",
    "web": "reactloop.tools.web:tools",
}
DEFAULT_FAMILIES = ("calculator", "lookup")
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


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What tool families may need to know about the run they serve."""

    notes: Path | None = None
    workspace: Path | None = None
    read_only: bool = False
    output_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def parse_families(text: str | None) -> tuple[str, ...]:
    if text is None:
        return DEFAULT_FAMILIES
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise UsageError(
            f"unknown tool family {unknown[0]!r}; available: {', '.join(sorted(FAMILIES))}"
        )
    return names


def build_tools(families: tuple[str, ...], context: ToolContext) -> list[Tool]:
    built: list[Tool] = []
    for family in families:
        module_name, _, function_name = FAMILIES[family].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("reactloop"):
                raise UsageError(
                    f"tool family {family!r} is not available in this version"
                ) from None
            raise
        built.extend(getattr(module, function_name)(context))
    return built
