"""The MCP client the official conformance suite (``@modelcontextprotocol/conformance``,
client mode) runs: reactloop's own client, as ``reactloop run --mcp-url`` uses it.

    python conformance_client.py URL      (MCP_CONFORMANCE_SCENARIO names the scenario)

It starts the server at URL through ``MCPServers``, lists its tools and calls each one through
a ``Toolbox`` with arguments made from its schema (each number 2, each string "x"), as a model
would; a server's question (elicitation) is accepted as the form shows it, its defaults
untouched, as a user who presses Enter would. It prints one line per call.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from reactloop import Toolbox, ToolCall
from reactloop.errors import UsageError
from reactloop.tools.mcp import MCPServers, ServerConfig
from reactloop.tools.mcp.elicitation import ElicitationAnswer, ElicitationRequest

EXAMPLES = {"number": 2, "integer": 2, "string": "x", "boolean": True}


def accept_as_shown(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {name: EXAMPLES.get(spec.get("type")) for name, spec in properties.items()}


def main(url: str) -> int:
    config = ServerConfig(name="conformance", url=url, startup_timeout=10, call_timeout=20)
    servers = MCPServers([config], elicit=accept_as_shown)
    try:
        servers.start()
    except UsageError as exc:  # as reactloop run says it: one line
        print(f"reactloop: {exc}", file=sys.stderr)
        return 1
    try:
        toolbox = Toolbox(servers.tools)
        for tool in servers.tools:
            arguments = json.dumps(example_arguments(getattr(tool, "schema", {})))
            result = toolbox.execute(ToolCall(id=tool.name, name=tool.name, arguments=arguments))
            print(tool.name, "ok" if result.ok else "error", result.to_content())
    finally:
        servers.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[-1]))
