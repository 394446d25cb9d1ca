"""A stateless MCP server over streamable HTTP (the SDK's, on the 2026-07-28 protocol era
and the handshake era alike) whose ``tools/call`` of some tools is answered with what no
MCP server should send, as a broken proxy or a crashed backend would.

    python modern_http_server.py PORT [--broken-listing | --deep-listing] [--token T]

Tools: ``echo`` (a proper answer); ``html`` (200, ``text/html``: an error page);
``not_json`` (200, ``application/json``, a body that is not JSON); ``empty`` (200,
``application/json``, no body); ``binary`` (200, ``application/octet-stream``, bytes that are
not UTF-8); ``sse_garbage`` (an event stream whose event is HTML); ``bad_gateway`` (502,
``text/html``). With ``--broken-listing``, ``tools/list`` is answered with the ``html`` page;
with ``--deep-listing``, with a tool whose schema is nested 20,000 deep; with ``--token T``,
every request without ``Authorization: Bearer T`` gets a 401 with a ``WWW-Authenticate``.
It says ``listening`` on stderr once it listens.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn
from mcp.server import MCPServer

server = MCPServer("modern")

BROKEN: dict[str, tuple[str, bytes]] = {
    "html": ("text/html; charset=utf-8", b"<html><head><title>502 Bad Gateway</title></head>"),
    "not_json": ("application/json", b"upstream connect error or disconnect/reset"),
    "empty": ("application/json", b""),
    "binary": ("application/octet-stream", b"\xff\xfe\x00garbage\x80"),
    "sse_garbage": ("text/event-stream", b"event: message\ndata: <html>oops</html>\n\n"),
    "bad_gateway": ("text/html", b"<html><title>502 Bad Gateway</title></html>"),
}


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


for _name in BROKEN:
    server.tool(name=_name, description=f"Answers {_name}.")(lambda: "never sent")

APP = server.streamable_http_app(stateless_http=True, json_response=True)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``APP``, but a call of a tool of ``BROKEN`` gets that tool's broken answer."""
    if scope["type"] == "http" and not _authorized(scope):
        challenge = (
            b'Bearer error="invalid_token", resource_metadata="http://127.0.0.1/.well-known"'
        )
        headers = [(b"www-authenticate", challenge), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return None
    if scope["type"] != "http" or scope["method"] != "POST":
        return await APP(scope, receive, send)
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    broken = _broken(body)
    if broken is None:
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await APP(scope, replay, send)
    content_type, payload = broken
    headers = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(payload))]
    status = 502 if payload.startswith(b"<html><title>502") else 200
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
    return None


def _authorized(scope: dict[str, Any]) -> bool:
    """With ``--token T``, only requests with ``Authorization: Bearer T`` are answered."""
    if "--token" not in sys.argv:
        return True
    expected = b"Bearer " + sys.argv[sys.argv.index("--token") + 1].encode()
    return (b"authorization", expected) in scope.get("headers", [])


def _broken(body: bytes) -> tuple[str, bytes] | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict):
        return None
    if message.get("method") == "tools/list" and "--broken-listing" in sys.argv:
        return BROKEN["html"]
    if message.get("method") == "tools/list" and "--deep-listing" in sys.argv:
        schema = '{"items": ' * 20_000 + "{}" + "}" * 20_000
        tool = '{"name": "deep", "inputSchema": ' + schema + "}"
        ident = json.dumps(message.get("id"))
        answer = '{"jsonrpc": "2.0", "id": ' + ident + ', "result": {"tools": [' + tool + "]}}"
        return "application/json", answer.encode()
    if message.get("method") != "tools/call":
        return None
    return BROKEN.get(str((message.get("params") or {}).get("name")))


if __name__ == "__main__":
    config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    uv = uvicorn.Server(config)
    original = uv.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        print("listening", file=sys.stderr, flush=True)

    uv.startup = startup  # type: ignore[method-assign]
    uv.run()
