"""An MCP server over streamable HTTP behind its own OAuth authorization server, as small as
the MCP authorization spec allows: protected resource metadata, authorization server
metadata, dynamic client registration, the authorization code grant with PKCE (S256) and
refresh tokens.

    python oauth_server.py PORT [--login]

``/mcp`` (the SDK's server, tool ``echo``) answers only ``Authorization: Bearer`` with a
token it issued, else 401 with a ``WWW-Authenticate`` naming its metadata. ``/authorize``
redirects at once with a code; with ``--login`` it shows a page (a user is needed) unless the
query says ``approve=1``, as a user's click would. ``GET /stats`` says how many
authorizations and token requests there were. It says ``listening`` on stderr once it listens.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
from typing import Any
from urllib.parse import parse_qs, urlencode

import uvicorn
from mcp.server import MCPServer

server = MCPServer("guarded")
APP = server.streamable_http_app(stateless_http=True, json_response=True)
ISSUED: set[str] = set()
CODES: dict[str, str] = {}  # code -> code_challenge
STATS = {"authorizations": 0, "tokens": 0}


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return await APP(scope, receive, send)
    base = f"http://127.0.0.1:{scope['server'][1]}"
    path, query = scope["path"], parse_qs(scope.get("query_string", b"").decode())
    if path == "/mcp":
        if _bearer(scope) in ISSUED:
            return await APP(scope, receive, send)
        challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
        return await _send(send, 401, b"", [(b"www-authenticate", challenge.encode())])
    if path == "/.well-known/oauth-protected-resource/mcp":
        return await _json(send, {"resource": f"{base}/mcp", "authorization_servers": [base]})
    if path == "/.well-known/oauth-authorization-server":
        return await _json(send, _metadata(base))
    if path == "/register":
        body = json.loads(await _body(receive))
        return await _json(send, {**body, "client_id": secrets.token_hex(8)}, 201)
    if path == "/authorize":
        return await _authorize(send, query)
    if path == "/token":
        return await _token(send, parse_qs((await _body(receive)).decode()))
    if path == "/stats":
        return await _json(send, STATS)
    return await _send(send, 404, b"")


def _metadata(base: str) -> dict[str, Any]:
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }


async def _authorize(send: Any, query: dict[str, list[str]]) -> None:
    if "--login" in sys.argv and query.get("approve") != ["1"]:
        page = b"<!doctype html><form><button>Allow</button></form>"
        return await _send(send, 200, page, [(b"content-type", b"text/html")])
    STATS["authorizations"] += 1
    code = secrets.token_hex(8)
    CODES[code] = query["code_challenge"][0]
    answer = urlencode({"code": code, "state": query["state"][0]})
    location = f"{query['redirect_uri'][0]}?{answer}"
    return await _send(send, 302, b"", [(b"location", location.encode())])


async def _token(send: Any, form: dict[str, list[str]]) -> None:
    grant = form["grant_type"][0]
    if grant == "authorization_code":
        verifier = form["code_verifier"][0].encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if CODES.pop(form["code"][0], None) != digest.decode():
            return await _json(send, {"error": "invalid_grant"}, 400)
    STATS["tokens"] += 1
    token = "tok-" + secrets.token_hex(8)
    ISSUED.add(token)
    answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
    return await _json(send, {**answer, "refresh_token": "ref-" + secrets.token_hex(8)})


def _bearer(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value.startswith(b"Bearer "):
            return str(value[7:].decode())
    return ""


async def _body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def _json(send: Any, value: Any, status: int = 200) -> None:
    headers = [(b"content-type", b"application/json")]
    return await _send(send, status, json.dumps(value).encode(), headers)


async def _send(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [*(headers or []), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    uv = uvicorn.Server(config)
    original = uv.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        print("listening", file=sys.stderr, flush=True)

    uv.startup = startup  # type: ignore[method-assign]
    uv.run()
