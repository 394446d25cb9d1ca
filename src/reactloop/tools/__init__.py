"""Tools: ``@tool`` (``base``), the ``Toolbox`` that runs calls, and the built-in families.

Built-in families by name (``--tools a,b``): ``calculator``, ``lookup`` (a notes file),
``files`` (read, list, search, write, edit beneath a workspace), ``bash`` (sandboxed
commands), ``web`` (the weather and currency tools); ``reactloop.tools.mcp`` brings tools
from MCP servers. Family modules are imported when a family is asked for.
"""

from __future__ import annotations

from reactloop.tools.calculator import calculator_tool
from reactloop.tools.lookup import lookup_tool
from reactloop.tools.registry import FAMILIES, ToolContext, build_tools, parse_families

__all__ = [
    "FAMILIES",
    "ToolContext",
    "build_tools",
    "calculator_tool",
    "lookup_tool",
    "parse_families",
]
