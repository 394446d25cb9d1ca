"""The ``--mcp``, ``--mcp-url`` and ``--mcp-config`` options that ``run`` and ``tools`` share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

MCP_HELP = (
    "Start an MCP server over stdio and add its tools (repeatable), e.g. "
    "--mcp 'uvx mcp-server-time'. Split like a shell line, run without a shell."
)
MCP_URL_HELP = (
    "Connect to an MCP server over streamable HTTP and add its tools (repeatable), e.g. "
    "--mcp-url http://127.0.0.1:3001/mcp; a URL ending in /sse uses the older HTTP+SSE transport."
)
MCP_CONFIG_HELP = (
    "Start the MCP servers of an mcpServers JSON file (command, args, env, cwd; or url, "
    "headers, type http or sse; optional startupTimeout, listToolsTimeout, callTimeout in seconds)."
)


def mcp_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--mcp-config", type=click.Path(path_type=Path), help=MCP_CONFIG_HELP)(
        command
    )
    command = click.option("--mcp-url", multiple=True, help=MCP_URL_HELP)(command)
    return click.option("--mcp", multiple=True, help=MCP_HELP)(command)
