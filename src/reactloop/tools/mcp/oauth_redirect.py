"""``LoopbackRedirect``: where an authorization server sends the user back with the code.

A socket on ``127.0.0.1`` (RFC 8252's loopback redirect) is bound when the server's OAuth is
set up, on the port of the registration kept for it if it is free, else on a new one. When
the flow needs the user's consent, the authorization URL is first fetched without a user
(an HTTP GET, redirects not followed): a server that grants at once (one that already knows
the client, a test server) answers with the redirect, and its code is taken from there. One
that shows a page wants the user: in a terminal the browser is opened at the URL (which is
printed too) and the listener waits for the redirect, up to ``AUTHORIZE_SECONDS`` with the
start-up clock stopped; without a terminal the start fails and says why.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

AUTHORIZE_SECONDS = 300.0
CALLBACK_PATH = "/callback"
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>reactloop</title><p>reactloop is authorized (or was refused): "
    b"you can close this tab.</p>"
)


class AuthorizationRefused(Exception):
    """The user or the server refused, or no user was there to ask."""


class LoopbackRedirect:
    def __init__(
        self,
        server: str,
        port: int = 0,
        pause: Callable[[float], None] = lambda seconds: None,
        interactive: Callable[[], bool] | None = None,
    ) -> None:
        self.server = server  # its name, for what is printed
        self._pause = pause
        self._interactive = interactive or _in_a_terminal
        self._socket = _bound(port)
        self.port: int = self._socket.getsockname()[1]
        self.uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        self._answer: dict[str, list[str]] | None = None

    def close(self) -> None:
        self._socket.close()

    async def redirect(self, authorization_url: str) -> None:
        """The SDK's ``redirect_handler``: find the user's answer to ``authorization_url``."""
        self._answer = await self._without_a_user(authorization_url)
        if self._answer is not None:
            return
        if not self._interactive():
            raise AuthorizationRefused(
                "its authorization server asks for a user to log in: run reactloop once in a"
                " terminal (the browser opens), or configure a client with"
                ' "oauth": {"grant": "client_credentials", ...}'
            )
        import anyio

        print(
            f"reactloop: MCP server {self.server!r} needs you to authorize reactloop;"
            f" opening your browser at {authorization_url}",
            file=sys.stderr,
        )
        with contextlib.suppress(Exception):
            webbrowser.open(authorization_url)
        self._pause(AUTHORIZE_SECONDS)
        self._answer = await anyio.to_thread.run_sync(
            self.wait_for_redirect, AUTHORIZE_SECONDS, abandon_on_cancel=True
        )

    async def callback(self) -> Any:
        """The SDK's ``callback_handler``: the code (and state, issuer) the redirect carried."""
        from mcp.shared.auth import AuthorizationCodeResult

        answer, self._answer = self._answer or {}, None
        if "error" in answer:
            said = answer.get("error_description", answer["error"])[0]
            raise AuthorizationRefused(f"its authorization server refused: {said}")
        if "code" not in answer:
            raise AuthorizationRefused("its authorization server sent no code")
        first = {key: values[0] for key, values in answer.items()}
        return AuthorizationCodeResult(
            code=first["code"], state=first.get("state"), iss=first.get("iss")
        )

    async def _without_a_user(self, url: str) -> dict[str, list[str]] | None:
        import httpx2

        try:
            async with httpx2.AsyncClient(timeout=10.0) as http:
                response = await http.get(url, follow_redirects=False)
        except httpx2.HTTPError:
            return None
        location = response.headers.get("location", "")
        if not response.is_redirect or not self._ours(location):
            return None
        return parse_qs(urlsplit(location).query)

    def _ours(self, location: str) -> bool:
        parts = urlsplit(location)
        return parts.hostname in ("127.0.0.1", "localhost") and parts.port == self.port

    def wait_for_redirect(self, seconds: float) -> dict[str, list[str]]:
        """The query of the first request the browser makes to the callback path."""
        end = time.monotonic() + seconds
        self._socket.settimeout(1.0)
        while (left := end - time.monotonic()) > 0:
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(min(left, 10.0))
                query = _callback_query(connection)
                if query is not None:
                    connection.sendall(ANSWER)
                    return query
        raise AuthorizationRefused(f"no answer from the browser within {AUTHORIZE_SECONDS:g} s")


def _bound(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError:
        listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    return listener


def _callback_query(connection: socket.socket) -> dict[str, list[str]] | None:
    try:
        head = connection.recv(8192).decode("latin-1")
    except OSError:
        return None
    words = head.split(" ", 2)
    if len(words) < 2 or words[0] != "GET":
        return None
    parts = urlsplit(words[1])
    if parts.path != CALLBACK_PATH:
        with contextlib.suppress(OSError):
            connection.sendall(b"HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n")
        return None
    return parse_qs(parts.query)


def _in_a_terminal() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()
