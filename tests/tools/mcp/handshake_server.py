"""An MCP server of the handshake era only (as SDK 1.x servers are), over stdio, that writes
each method it is sent to a file, one a line: a test sees whether the client probed it.

    python handshake_server.py METHODS_FILE

It answers ``initialize`` (protocol 2025-06-18), ``tools/list`` (one tool, ``echo``) and
``tools/call``, and ``server/discover`` as SDK 1.x servers do: "Method not found".
"""

from __future__ import annotations

import json
import sys
from typing import Any

ECHO = {"name": "echo", "description": "Say the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}  # fmt: skip


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        info = {"name": "handshake", "version": "1.0"}
        return {"result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                           "serverInfo": info}}  # fmt: skip
    if method == "tools/list":
        return {"result": {"tools": [ECHO]}}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text"))
        return {"result": {"content": [{"type": "text", "text": text}]}}
    return {"error": {"code": -32601, "message": "Method not found"}}


def main(log: str) -> None:
    for line in sys.stdin:
        message = json.loads(line)
        with open(log, "a") as out:
            out.write(message.get("method", "(answer)") + "\n")
        if "id" in message and "method" in message:
            reply = {"jsonrpc": "2.0", "id": message["id"], **answer(message["method"],
                     message.get("params") or {})}  # fmt: skip
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
