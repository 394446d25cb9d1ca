"""A small MCP server (stdio) whose tools have the input schemas of a JSON file, as given.

    python schema_server.py TOOLS.json      # {"tool_name": <its inputSchema>, ...}

Each call answers with the arguments it got, as JSON text, so that a test sees what reached
the server. The schemas are sent as they are: this is how a server with hand-written (draft-04,
non-object, ``$ref``-full) schemas looks to a client.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

SCHEMAS: dict[str, Any] = {}


async def list_tools(context: Any, params: Any) -> types.ListToolsResult:
    tools = [
        types.Tool(name=name, description=f"The {name} tool.", input_schema=schema)
        for name, schema in SCHEMAS.items()
    ]
    return types.ListToolsResult(tools=tools)


async def call_tool(context: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = json.dumps({"tool": params.name, "arguments": params.arguments}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server = Server("schemas", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        SCHEMAS.update(json.load(file))
    anyio.run(main)
