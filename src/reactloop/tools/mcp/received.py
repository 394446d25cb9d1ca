"""``Received``: what a server over HTTP sent back to a call, when it was not an MCP answer.

The SDK reports such an answer in its own words ("Unexpected content type", a pydantic error
over several lines, "Server returned an error response"), or not at all (the call waits out
its limit). An event hook on the session's HTTP client notes, for each ``tools/call`` answered
with something that is not JSON (an HTML error page from a proxy, an empty body, bytes), the
status, the content type and the first bytes, so that the call's error says in one line what
came back; and so for the tool listing, whose JSON is also measured: one nested too deep for
the SDK's decoder names its tool (``listing.deep_listing``). A server-sent event stream is
left to the SDK (reading it here would consume it).
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

from reactloop.support.json_decode import nesting_exceeds
from reactloop.tools.mcp.listing import LISTING_DEPTH, deep_listing, too_deep

MAX_READ = 64 * 1024  # of a body that is not JSON (one byte more: "more than")
SHOWN = 80  # bytes of it in the error


LISTING = ("tools/list", "")


class Received:
    """The last non-MCP answer to each tool's call (and to the tool listing), until taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_request: dict[tuple[str, str], str] = {}
        self.refused: str | None = None  # a listing too deep to decode: why
        self.unauthorized: str | None = None  # a 401 or 403: its status and challenge

    async def hook(self, response: Any) -> None:
        """An ``httpx`` response hook: note a call's or a listing's answer that is not JSON.
        Whatever goes wrong here is left to the SDK: a hook must not break the request."""
        with contextlib.suppress(Exception):  # the SDK reports the answer in its own words
            await self._note(response)

    async def _note(self, response: Any) -> None:
        if response.status_code in (401, 403):
            challenge = response.headers.get("www-authenticate")
            shown = f" (WWW-Authenticate: {' '.join(challenge.split())[:200]})" if challenge else ""
            self.unauthorized = f"HTTP {response.status_code}{shown}"
        key = _request_key(response.request)
        if key is None:
            return
        kind = response.headers.get("content-type", "")
        if kind.lower().startswith("text/event-stream"):
            return
        head = await _head(response, json_body=kind.lower().startswith("application/json"))
        if key == LISTING and head is None:
            self._check_depth(response.content)
        if head is None:  # JSON: the SDK reads it as it does
            return
        with self._lock:
            self._by_request[key] = describe(response.status_code, kind, head)

    def _check_depth(self, body: bytes) -> None:
        """A listing nested too deep for the SDK's decoder names its tool (``deep_listing``)."""
        text = body.decode("utf-8", "replace")
        if nesting_exceeds(text, LISTING_DEPTH) and (found := deep_listing(text)) is not None:
            self.refused = str(too_deep(found[1]))

    def take(self, tool: str | None) -> str | None:
        """What came back to the last call of ``tool`` (None: to the tool listing), if it
        was not JSON; once."""
        with self._lock:
            return self._by_request.pop(LISTING if tool is None else ("tools/call", tool), None)


def describe(status: int, content_type: str, head: bytes) -> str:
    """``HTTP 200, text/html, 43 bytes: b'<html>…'`` in one line."""
    kind = " ".join(content_type.split()) or "no content type"
    shown = repr(head[:SHOWN]) + ("..." if len(head) > SHOWN else "")
    size = f"more than {MAX_READ:,}" if len(head) > MAX_READ else f"{len(head):,}"
    body = f"{size} bytes: {shown}" if head else "an empty body"
    return f"HTTP {status}, {kind}, {body}"


async def _head(response: Any, *, json_body: bool) -> bytes | None:
    """The start of a body that is not JSON; None for one that looks like JSON (it begins
    with ``{`` or ``[``: the SDK's own error shows what is wrong in it).

    A body said to be JSON is read whole, as the SDK reads it; any other, up to ``MAX_READ``
    bytes (the SDK does not read it).
    """
    if json_body:
        body: bytes = await response.aread()
        return None if body.lstrip()[:1] in (b"{", b"[") else body[: MAX_READ + 1]
    head = b""
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) > MAX_READ:
            break
    return head[: MAX_READ + 1]


def _request_key(request: Any) -> tuple[str, str] | None:
    """``("tools/call", tool)`` for a call, ``LISTING`` for a listing, None for the rest."""
    if request.method != "POST":
        return None
    message = json.loads(request.content)
    method = message.get("method") if isinstance(message, dict) else None
    if method == "tools/list":
        return LISTING
    params = message.get("params") if method == "tools/call" else None
    name = params.get("name") if isinstance(params, dict) else None
    return ("tools/call", name) if isinstance(name, str) else None
