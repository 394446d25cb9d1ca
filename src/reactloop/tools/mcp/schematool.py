"""``schema_tool``: an MCP server's tool, made by ``Tool.from_schema``.

``Tool.from_schema`` does the work: ``parameters`` is the given JSON Schema, and ``validate``
checks arguments against it before the call (``reactloop.tools.schemacheck``). An MCP tool is
made with ``strict=False``: a schema that is not valid JSON Schema still makes a tool, whose
arguments only the server checks. ``SchemaTool`` is the class of such tools (a ``Tool`` with
a ``schema`` always set), so that they can be told apart and extended (``MCPTool``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reactloop.tools.arguments import any_arguments
from reactloop.tools.base import Tool

__all__ = ["SchemaTool", "any_arguments", "schema_tool"]


@dataclass(frozen=True, kw_only=True)
class SchemaTool(Tool):
    """A ``Tool`` described and validated by its ``schema`` (``Tool.from_schema``)."""

    schema: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def schema_tool(
    name: str,
    description: str,
    schema: dict[str, Any],
    function: Callable[..., Any],
    *,
    read_only: bool = False,
) -> SchemaTool:
    """A tool the model calls with arguments matching ``schema``; ``function(**arguments)``."""
    return SchemaTool.from_schema(
        name, description, schema, function, read_only=read_only, strict=False
    )
