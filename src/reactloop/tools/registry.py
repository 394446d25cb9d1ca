"""Built-in tool families by name, for ``--tools a,b`` on the command line.

Each family is a module with ``tools(context) -> list[Tool]``; modules are imported only when
their family is asked for; each gets the run's ``ToolContext`` (``tools/base.py``).
"""

from __future__ import annotations

import importlib

from reactloop.errors import UsageError
from reactloop.tools.base import Tool
from reactloop.tools.context import ToolContext

FAMILIES: dict[str, str] = {
    "calculator": "reactloop.tools.families.calculator:tools",
    "lookup": "reactloop.tools.families.lookup:tools",
    "files": "reactloop.tools.families.files:tools",
    "bash": "reactloop.tools.families.bash:tools",
    "web": "reactloop.tools.families.web:tools",
}
DEFAULT_FAMILIES = ("calculator", "lookup")


NONE = "none"  # ``--tools none``, as ``--tools ""``: no built-in tool


def parse_families(text: str | None) -> tuple[str, ...]:
    if text is None:
        return DEFAULT_FAMILIES
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if NONE in names:  # no built-in tool: only those of MCP servers, if any
        if len(names) > 1:
            others = ",".join(names)
            raise UsageError(f"tool family {NONE!r} goes alone, not with others: {others}")
        return ()
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
