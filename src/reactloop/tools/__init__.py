"""Tools: ``@tool`` (``base``), the ``Toolbox`` that runs calls, and the built-in families.

Built-in families by name (``--tools a,b``): ``calculator``, ``lookup`` (a notes file),
``files`` (read, list, search, write, edit beneath a workspace), ``bash`` (sandboxed
commands), ``web`` (the weather and currency tools); ``reactloop.tools.mcp`` brings tools
from MCP servers. Family modules are imported when a family is asked for. Big registries:
deferred tools found with ``search_tools`` (``search``, ranked by ``bm25``); Agent Skills
(``skills``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop.support import lazy_names

if TYPE_CHECKING:  # loaded on first use, below: ``@tool`` alone needs none of them
    from reactloop.tools.base import ToolContext
    from reactloop.tools.calculator import calculator_tool
    from reactloop.tools.lookup import lookup_tool
    from reactloop.tools.registry import FAMILIES, build_tools, parse_families

_LAZY = {
    "FAMILIES": "reactloop.tools.registry",
    "ToolContext": "reactloop.tools.registry",
    "build_tools": "reactloop.tools.registry",
    "parse_families": "reactloop.tools.registry",
    "calculator_tool": "reactloop.tools.calculator",
    "lookup_tool": "reactloop.tools.lookup",
}

__getattr__ = lazy_names.lazy_getattr(__name__, _LAZY)


__all__ = [
    "FAMILIES",
    "ToolContext",
    "build_tools",
    "calculator_tool",
    "lookup_tool",
    "parse_families",
]
