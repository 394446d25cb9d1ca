"""A hand-written MCP server (stdio, JSON-RPC lines, no SDK) whose tools' input schemas are as
deep or as big as asked, written as text: no SDK server can send JSON nested 20,000 deep.

    python raw_schema_server.py --deep N            # {"items": {"items": ...}} N levels
    python raw_schema_server.py --megabytes M       # an enum of M MB
    python raw_schema_server.py --properties N      # N string properties
    [--tools K]                                     # K such tools, t0 ... t(K-1)
    [--description-megabytes D]                     # each with a description of D MB
"""

from __future__ import annotations

import argparse
import json
import sys


def schema_text(options: argparse.Namespace) -> str:
    if options.deep:
        inner = '{"type": "array", "items": ' * options.deep + "{}" + "}" * options.deep
        return '{"type": "object", "properties": {"x": ' + inner + "}}"
    if options.properties:
        one = '{"type": "string", "description": "' + "d" * 60 + '"}'
        props = ", ".join(f'"p{n}": {one}' for n in range(options.properties))
        return '{"type": "object", "properties": {' + props + "}}"
    words = ", ".join(['"' + "w" * 94 + '"'] * int(options.megabytes * 10_000))
    return '{"type": "object", "properties": {"x": {"enum": [' + words + "]}}}"


def send(ident: object, key: str, body: str) -> None:
    line = '{"jsonrpc": "2.0", "id": ' + json.dumps(ident) + f', "{key}": ' + body + "}\n"
    sys.stdout.write(line)
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deep", type=int, default=0)
    parser.add_argument("--megabytes", type=float, default=0.0)
    parser.add_argument("--properties", type=int, default=0)
    parser.add_argument("--tools", type=int, default=1)
    parser.add_argument("--description-megabytes", type=float, default=0.0)
    options = parser.parse_args()
    schema = schema_text(options)
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        if method == "initialize":
            version = json.dumps(message["params"]["protocolVersion"])
            server = '"serverInfo": {"name": "raw", "version": "1"}'
            send(
                ident,
                "result",
                f'{{"protocolVersion": {version}, "capabilities": {{"tools": {{}}}}, {server}}}',
            )
        elif method == "tools/list":
            about = json.dumps("d" * int(options.description_megabytes * 1_000_000))
            tools = ", ".join(
                f'{{"name": "t{n}", "description": {about}, "inputSchema": {schema}}}'
                for n in range(options.tools)
            )
            send(ident, "result", '{"tools": [' + tools + "]}")
        else:
            send(ident, "error", '{"code": -32601, "message": "no such method"}')


if __name__ == "__main__":
    main()
