"""Tools from MCP servers (the ``mcp`` extra): stdio, streamable HTTP and the older HTTP+SSE,
through the SDK.

    with open_mcp_tools(stdio=["uvx mcp-server-time"]) as tools:
        Agent(model, [*tools]).run("What time is it in Athens?")

``mcp_tools(...)`` gives the tools without a ``with``: its servers stop when the process exits.

The client (``client``: asyncio, threads, the SDK) is imported when servers are started or its
names are asked for, so that the adapters, which render schemas with ``schema``, do not load it.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import MissingDependency
from reactloop.tools.base import Tool
from reactloop.tools.mcp.config import (
    CALL_SECONDS,
    LIST_TOOLS_SECONDS,
    STARTUP_SECONDS,
    ServerConfig,
    load_config,
    parse_config,
    stdio_server,
    url_server,
)
from reactloop.tools.mcp.schema import dialect_schema, inline_schema, normalize_schema, schema_for
from reactloop.tools.mcp.schematool import SchemaTool, schema_tool

if TYPE_CHECKING:
    from reactloop.tools.mcp.client import MCPServers, MCPStartError, MCPTool

_CLIENT = "reactloop.tools.mcp.client"
_LAZY = ("MCPServers", "MCPStartError", "MCPTool")

__all__ = [
    "CALL_SECONDS",
    "LIST_TOOLS_SECONDS",
    "STARTUP_SECONDS",
    "MCPServers",
    "MCPStartError",
    "MCPTool",
    "SchemaTool",
    "ServerConfig",
    "dialect_schema",
    "inline_schema",
    "load_config",
    "mcp_tools",
    "normalize_schema",
    "open_mcp_tools",
    "parse_config",
    "schema_for",
    "schema_tool",
    "server_configs",
    "stdio_server",
    "url_server",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_CLIENT), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _servers() -> type[MCPServers]:
    servers: type[MCPServers] = importlib.import_module(_CLIENT).MCPServers
    return servers


def server_configs(
    stdio: Iterable[str] = (),
    urls: Iterable[str] = (),
    config: str | Path | None = None,
) -> list[ServerConfig]:
    """The servers of ``--mcp`` command lines, ``--mcp-url`` URLs and an ``--mcp-config`` file."""
    servers = [stdio_server(command) for command in stdio]
    servers += [url_server(url) for url in urls]
    if config is not None:
        servers += load_config(config)
    return servers


@contextlib.contextmanager
def open_mcp_tools(
    stdio: Iterable[str] = (),
    urls: Iterable[str] = (),
    config: str | Path | None = None,
    *,
    servers: Iterable[ServerConfig] = (),
    reserved: Iterable[str] = (),
) -> Iterator[list[Tool]]:
    """The tools of these servers while the ``with`` lasts; the servers stop when it ends
    (an error or Ctrl-C included). ``reserved``: names already taken (built-in tools)."""
    configs = [*server_configs(stdio, urls, config), *servers]
    if not configs:
        yield []
        return
    _require_sdk()
    with _servers()(configs, reserved=reserved) as started:
        yield list(started.tools)


def mcp_tools(*servers: str | ServerConfig, config: str | Path | None = None) -> list[Tool]:
    """The tools of these servers (a command line, an ``http(s)://`` URL or a ``ServerConfig``),
    started now and stopped when the process exits."""
    configs = [_config(server) for server in servers]
    if config is not None:
        configs += load_config(config)
    _require_sdk()
    started = _servers()(configs)
    started.start()
    atexit.register(started.close)
    return list(started.tools)


def _config(server: str | ServerConfig) -> ServerConfig:
    if isinstance(server, ServerConfig):
        return server
    if server.startswith(("http://", "https://")):
        return url_server(server)
    return stdio_server(server)


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingDependency(
            "MCP servers need the MCP SDK: pip install 'reactloop[mcp]'"
        ) from None
