"""Tools: what a tool is, the ``Toolbox`` that prepares calls and makes their results, and the
families.

In reading order:

- ``context.py``: ``ToolContext``, the run's deadline, the id of the call a tool serves
- ``arguments.py``: a function's arguments model, its docstring's descriptions, its schema
- ``base.py``: ``Tool``, ``@tool``; ``plain.py``: a plain function as a tool
- ``prepared.py``: ``PreparedCall``, a call decoded and validated once (``schemacheck.py``,
  ``schema_coerce.py``: untyped strings read by the schema)
- ``toolbox.py``: ``Toolbox``, a run's tools by name; a prepared call turned into its result
  (``output_text.py``), long outputs cut and kept (``read_output.py``); where and when a run's
  calls run is the loop's call runtime (``reactloop/loop/runtime/``); ``questions.py``: the
  run's channel for a question a call asks the person (``AwaitingAnswer``: the call waits for
  them)
- ``search.py`` (+ ``bm25.py``): deferred tools found with ``search_tools``; ``skills.py``:
  Agent Skills
- ``registry.py``: the families by name; ``families/``: the built-in families;
  ``mcp/``: tools from MCP servers
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop.support import lazy_names

if TYPE_CHECKING:  # loaded on first use, below: ``@tool`` alone needs none of them
    from reactloop.tools.context import ToolContext
    from reactloop.tools.families.calculator import calculator_tool
    from reactloop.tools.families.lookup import lookup_tool
    from reactloop.tools.registry import FAMILIES, build_tools, parse_families

_LAZY = {
    "FAMILIES": "reactloop.tools.registry",
    "ToolContext": "reactloop.tools.registry",
    "build_tools": "reactloop.tools.registry",
    "parse_families": "reactloop.tools.registry",
    "calculator_tool": "reactloop.tools.families.calculator",
    "lookup_tool": "reactloop.tools.families.lookup",
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
