"""Starting MCP servers and taking their tools: ``open_mcp_tools`` (for a ``with``) and
``mcp_tools`` (stopped when the process exits)."""

from __future__ import annotations

import atexit
import contextlib
import importlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from reactloop.errors import MissingDependency
from reactloop.tools.base import Tool
from reactloop.tools.mcp.config import ServerConfig, load_config, stdio_server, url_server

if TYPE_CHECKING:
    from reactloop.tools.mcp.client import MCPServers
    from reactloop.tools.mcp.elicitation import Elicit

_CLIENT = "reactloop.tools.mcp.client"


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
    elicit: Elicit | None = None,
) -> Iterator[list[Tool]]:
    """The tools of these servers while the ``with`` lasts; the servers stop when it ends
    (an error or Ctrl-C included). ``reserved``: names already taken (built-in tools);
    ``elicit``: who answers a server's question to the user (``elicitation.py``)."""
    configs = [*server_configs(stdio, urls, config), *servers]
    if not configs:
        yield []
        return
    _require_sdk()
    with _servers()(configs, reserved=reserved, elicit=elicit) as started:
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
