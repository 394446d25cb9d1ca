"""Tools from MCP servers (the ``mcp`` extra): stdio, streamable HTTP and the older HTTP+SSE,
through the SDK.

    with open_mcp_tools(stdio=["uvx mcp-server-time"]) as tools:
        Agent(model, [*tools]).run("What time is it in Athens?")

``mcp_tools(...)`` gives the tools without a ``with``: its servers stop when the process exits.

The client (``client.py``: asyncio, threads, the SDK) is imported when servers are started or
its names are asked for. The files: ``config.py`` (``ServerConfig``, ``--mcp-config`` files),
``opening.py`` (starting servers), ``client.py`` (``MCPServers``, ``MCPTool``), ``connection.py``
and ``background.py`` (one server's session on a background event loop), ``session.py``,
``eras.py`` (the protocol era each server spoke, remembered), ``oauth.py``,
``oauth_redirect.py`` and ``token_store.py`` (OAuth for a remote server: the SDK's provider, the
loopback redirect, the tokens kept per server), ``elicitation.py`` (a server's question to the
user, and who answers it), ``answering.py`` (the question's call: the answer a person gave
for it, the journal's record, a call that waits for an answer),
``results.py`` (a call's result as an observation), ``schematool.py`` (a tool with a JSON
Schema of its own), ``listing.py`` (a listing's bounds, its schemas made ready within its
limit), ``received.py`` (what came back over HTTP that was not MCP), ``stdio.py`` and
``reaper.py`` (a stdio server's transport, and what it starts going with it). The providers'
forms of their schemas are in ``models/schemas/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reactloop.support import lazy_names
from reactloop.tools.mcp.answering import await_answer
from reactloop.tools.mcp.config import ServerConfig, load_config, stdio_server, url_server
from reactloop.tools.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    ask_on_terminal,
)
from reactloop.tools.mcp.opening import mcp_tools, open_mcp_tools

if TYPE_CHECKING:
    from reactloop.tools.mcp.client import MCPServers, MCPStartError, MCPTool

_CLIENT = "reactloop.tools.mcp.client"
_LAZY = {name: _CLIENT for name in ("MCPServers", "MCPStartError", "MCPTool")}
__getattr__ = lazy_names.lazy_getattr(__name__, _LAZY)

__all__ = [
    "ElicitationAnswer",
    "ElicitationRequest",
    "MCPServers",
    "MCPStartError",
    "MCPTool",
    "ServerConfig",
    "ask_on_terminal",
    "await_answer",
    "load_config",
    "mcp_tools",
    "open_mcp_tools",
    "stdio_server",
    "url_server",
]
