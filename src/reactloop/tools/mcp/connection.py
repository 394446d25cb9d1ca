"""``ServerConnection``: one MCP server for the length of a run, from any thread.

Every request has a limit (the server's own, cut to the run's time left). A server that
crashes, hangs or writes garbage ends that call with a ``ToolError`` naming the server and
what happened; the next call restarts it, once; after that the server is gone for the run.
A server is never waited for while it is being stopped: old sessions wind down on the
background loop, and ``close`` waits for all of them, bounded.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

from reactloop.errors import ToolError, describe_exception
from reactloop.tools.mcp import eras
from reactloop.tools.mcp.background import BackgroundLoop, LoopTimeout
from reactloop.tools.mcp.config import ServerConfig
from reactloop.tools.mcp.elicitation import Elicit
from reactloop.tools.mcp.listing import Listed, ListingBounds, ListingRefused, prepared
from reactloop.tools.mcp.oauth import oauth_failure
from reactloop.tools.mcp.session import Session, StartTimeout

RESTARTS = 1
CONNECTION_CLOSED = -32000  # mcp_types.CONNECTION_CLOSED
MAX_PAGES = 100
HEADER_ADVICE = (
    'give the server\'s token as a header: "headers": {"Authorization": "Bearer ${TOKEN}"}'
    " in --mcp-config, read from the environment"
)


class ServerFailure(Exception):
    """The server could not be started or listed; the message names the server and why."""


class ServerConnection:
    def __init__(
        self,
        config: ServerConfig,
        loop: BackgroundLoop,
        deadline: Callable[[], float | None] = lambda: None,
        elicit: Elicit | None = None,
    ) -> None:
        self.config = config
        self.elicit = elicit
        self.name = config.name
        self._loop = loop
        self._deadline = deadline
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._client: Any = None
        self._sessions: list[tuple[Session, concurrent.futures.Future[None]]] = []
        self._broken: str | None = None
        self._gone: str | None = None
        self.restarts_left = RESTARTS
        self._startup, self._why = config.startup_timeout, ""

    # -- start and list ----------------------------------------------------------------------

    def start(self) -> None:
        """Start the server and finish the handshake; ``ServerFailure`` says why not."""
        self.begin()
        self.finish()

    def begin(self) -> None:
        """Start the server in the background (``finish`` waits for it)."""
        limit, self._why = self._limit(self.config.startup_timeout, "start-up")
        session = Session(self.config, self.elicit, eras.connect_mode(self.config))
        done = self._loop.submit(session.hold(limit))
        self._sessions.append((session, done))
        self._session, self._startup = session, limit

    def finish(self) -> None:
        session, limit, why = self._session, self._startup, self._why
        assert session is not None
        try:
            self._client = session.wait_ready(limit + 1.0)
            session.received.unauthorized = None  # a 401 OAuth answered
            eras.remember(self.config, eras.era_of(self._client.protocol_version))
        except (concurrent.futures.TimeoutError, StartTimeout):
            self._forget_era(session)
            self._retire(session)
            what = _unauthorized(session) or f"did not start within {_s(limit)} s{why}"
            raise ServerFailure(self._what(what)) from None
        except KeyboardInterrupt:
            self._retire(session)
            raise
        except Exception as exc:
            self._forget_era(session)
            self._retire(session)
            if (refused := _unauthorized(session, exc)) is not None:
                raise ServerFailure(self._what(refused)) from None
            raise ServerFailure(self._what(f"could not start: {_cause(exc)}", session)) from None

    def _forget_era(self, session: Session) -> None:
        """A start with the remembered handshake failed: the next start probes again."""
        if session.mode == "legacy":
            eras.remember(self.config, None)

    def list_tools(self, dialect: str = "openai") -> list[Listed]:
        """Every tool the server lists, all pages, their schemas bounded and made ready in
        ``dialect`` (``listing.py``), all within the list_tools limit."""
        limit, why = self._limit(self.config.list_tools_timeout, "tool listing")
        deadline = time.monotonic() + limit
        try:
            items = self._loop.run(self._all_tools(limit), limit)
            return prepared(items, dialect, deadline, f"{_s(limit)} s{why}")
        except ListingRefused as exc:
            raise ServerFailure(self._what(str(exc))) from None
        except (TimeoutError, LoopTimeout):
            self._broken = "did not list its tools"
            what = self._refused() or f"did not list its tools within {_s(limit)} s{why}"
            raise ServerFailure(self._what(what)) from None
        except Exception as exc:
            what = self._refused() or f"could not list its tools: {_cause(exc)}"
            raise ServerFailure(self._what(what)) from None

    async def _all_tools(self, limit: float) -> list[Any]:
        import anyio

        tools: list[Any] = []
        bounds = ListingBounds()
        cursor: str | None = None
        with anyio.fail_after(limit):
            for _ in range(MAX_PAGES):
                page = await self._client.list_tools(cursor=cursor)
                bounds.check(page.tools)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        return tools

    def _refused(self) -> str | None:
        """Why the transport refused the listing (a schema too deep to decode), or what came
        back instead of one over HTTP, if so."""
        session = self._session
        if session is None:
            return None
        if (refused := _unauthorized(session)) is not None:
            return refused
        if (refused := session.refused or session.received.refused) is not None:
            return refused
        if (received := session.received.take(None)) is not None:
            return f"answered the tool listing with what is not an MCP answer: {received}"
        return None

    # -- calls -------------------------------------------------------------------------------

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The ``CallToolResult`` of one call; ``ToolError`` for every failure."""
        client = self._ready()
        limit, why = self._limit(self.config.call_timeout, "call")
        session = self._session
        mark = session.stderr_size() if session is not None else 0
        try:
            return self._loop.run(_call(client, tool, arguments, limit), limit)
        except (TimeoutError, LoopTimeout):
            garbage = session.garbage if session is not None else None
            if (received := _received(session, tool)) is not None:
                what = f"sent what is not an MCP answer ({received}) and did not answer"
            elif garbage is not None:
                what = f"wrote output that is not JSON-RPC ({garbage}) and did not answer"
            else:
                what = "did not answer"
            raise self._failed(f"{what} {tool!r} within {_s(limit)} s{why}") from None
        except Exception as exc:
            if getattr(exc, "code", None) == CONNECTION_CLOSED:
                what = f"closed the connection during {tool!r}"
                raise self._failed(what, session, mark) from None
            if session is not None and (refused := _unauthorized(session, exc)) is not None:
                what = refused.replace("authorization:", f"authorization for {tool!r}:", 1)
                raise ToolError(self._what(what)) from None
            if (received := _received(session, tool)) is not None:
                what = f"answered {tool!r} with what is not an MCP answer: {received}"
                raise ToolError(self._what(what)) from None
            raise ToolError(self._what(f"refused {tool!r}: {_cause(exc)}")) from None

    def _ready(self) -> Any:
        with self._lock:
            if self._gone is not None:
                raise ToolError(self._what(f"is gone for this run ({self._gone})"))
            if self._broken is None:
                return self._client
            if self.restarts_left <= 0:
                self._gone = self._broken
                raise ToolError(self._what(f"is gone for this run ({self._gone})"))
            self._limit(self.config.startup_timeout, "restart")  # raises when the run is over
            self.restarts_left -= 1
            reason, self._broken = self._broken, None
            if self._session is not None:
                self._retire(self._session)
            try:
                self.start()
            except (ServerFailure, ToolError) as exc:
                self._gone = f"{reason}; the restart failed"
                message = f"{exc} (restarted after it {reason}); it is gone for this run"
                raise ToolError(message) from None
            return self._client

    def _failed(self, what: str, session: Session | None = None, mark: int = 0) -> ToolError:
        self._broken = what.split(" (", 1)[0]
        if self.restarts_left > 0:
            after = "it will be restarted on the next call"
        else:
            after = "it has been restarted once already and is gone for this run"
            self._gone = self._broken
        return ToolError(f"{self._what(what, session, mark)}; {after}")

    # -- limits and words --------------------------------------------------------------------

    def _limit(self, configured: float, what: str) -> tuple[float, str]:
        deadline = self._deadline()
        if deadline is None:
            return configured, ""
        left = deadline - time.monotonic()
        if left <= 0:
            raise ToolError(f"the run's time limit was reached before the MCP {what}")
        if left < configured:
            return left, " (the run's time left)"
        return configured, ""

    def _what(self, what: str, session: Session | None = None, mark: int = 0) -> str:
        text = f"MCP server {self.name!r} {what}"
        tail = session.stderr_tail(mark) if session is not None else ""
        return f"{text} (its stderr: {tail})" if tail else text

    # -- shutdown ----------------------------------------------------------------------------

    def _retire(self, session: Session) -> None:
        """Tell a session to stop; ``close`` waits for it."""
        self._loop.loop.call_soon_threadsafe(session.stop)
        if session is self._session:
            self._session, self._client = None, None

    def request_close(self) -> list[concurrent.futures.Future[None]]:
        """Tell every session to stop; the futures end when they have."""
        for session, _ in self._sessions:
            self._loop.loop.call_soon_threadsafe(session.stop)
        self._session, self._client = None, None
        self._gone = self._gone or "the client was closed"
        return [done for _, done in self._sessions]

    def close_files(self) -> None:
        for session, _ in self._sessions:
            session.close_files()


async def _call(client: Any, tool: str, arguments: dict[str, Any], limit: float) -> Any:
    import anyio

    with anyio.fail_after(limit):
        return await client.call_tool(tool, arguments)


def _unauthorized(session: Session, exc: BaseException | None = None) -> str | None:
    """ "needs authorization: …" when the server answered 401 or 403 since last asked, or
    OAuth failed (``exc``)."""
    refused, session.received.unauthorized = session.received.unauthorized, None
    failed = oauth_failure(exc) if exc is not None else None
    if refused is None and failed is None:
        return None
    said = "" if refused is None else f" it answered {refused}"
    if failed is not None:
        said += f"{',' if said else ''} OAuth did not get a token: {failed}"
    return f"needs authorization:{said} ({HEADER_ADVICE})"


def _received(session: Session | None, tool: str) -> str | None:
    return session.received.take(tool) if session is not None else None


def _s(seconds: float) -> str:
    return f"{round(seconds, 2):g}"


def _cause(exc: BaseException) -> str:
    """The innermost useful exception of an SDK error, exception groups unwrapped."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else describe_exception(exc)
    return _one_line(text)


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut at ``limit`` characters (an SDK's error may hold a pydantic
    report of several lines)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
