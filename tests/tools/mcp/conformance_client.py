"""The MCP client the official conformance suite (``@modelcontextprotocol/conformance``,
client mode) runs: reactloop's own client, as ``reactloop run --mcp-url`` uses it.

    python conformance_client.py URL      (MCP_CONFORMANCE_SCENARIO names the scenario)

It starts the server at URL through ``MCPServers``, lists its tools and calls each one through
a ``Toolbox`` with arguments made from its schema (each number 2, each string "x"), as a model
would; a server's question (elicitation) is accepted as the form shows it, its defaults
untouched, as a user who presses Enter would. It prints one line per call.

An ``auth/*`` scenario's credentials (``MCP_CONFORMANCE_CONTEXT``) become the server's
``oauth`` entry as a user would write it in ``--mcp-config``; every server is given the
client ID metadata document URL the suite expects, as a user who publishes one would.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from reactloop import Toolbox, ToolCall
from reactloop.errors import UsageError
from reactloop.tools.mcp import MCPServers, ServerConfig
from reactloop.tools.mcp.elicitation import ElicitationAnswer, ElicitationRequest

EXAMPLES = {"number": 2, "integer": 2, "string": "x", "boolean": True}
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def accept_as_shown(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {name: EXAMPLES.get(spec.get("type")) for name, spec in properties.items()}


def oauth_entry(scenario: str, context: dict[str, Any]) -> dict[str, str]:
    """The ``oauth`` entry a user would write for the scenario's credentials."""
    entry = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if "client_id" in context:
        entry["clientId"] = context["client_id"]
    if "client_secret" in context:
        entry["clientSecret"] = context["client_secret"]
    if "private_key_pem" in context:
        entry["privateKey"] = context["private_key_pem"]
        entry["signingAlgorithm"] = context.get("signing_algorithm", "RS256")
    if scenario.startswith("auth/client-credentials"):
        entry["grant"] = "client_credentials"
    return entry


def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    config = ServerConfig(
        name="conformance",
        url=url,
        startup_timeout=10,
        call_timeout=20,
        oauth=oauth_entry(scenario, context),
    )
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
