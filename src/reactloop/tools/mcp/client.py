"""``MCPServers``: the MCP servers of one run, started once, their tools, always shut down.

Each server's tools become ``SchemaTool``s with the server's own (normalised) schemas; a name
that two servers share, or that a built-in tool already has, is prefixed with the server's
name (``time_get_current_time``). Tools annotated ``readOnlyHint`` are ``read_only``,
``idempotentHint`` ``idempotent`` (run again on resume when they may have run).
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from reactloop.errors import UsageError
from reactloop.messages import ToolSpec
from reactloop.models.schemas.dialects import WRAPPED_KEY
from reactloop.tools.base import Tool
from reactloop.tools.context import run_deadline
from reactloop.tools.mcp.answering import Answering, calling
from reactloop.tools.mcp.background import BackgroundLoop
from reactloop.tools.mcp.config import ServerConfig, unique_names
from reactloop.tools.mcp.connection import ServerConnection, ServerFailure
from reactloop.tools.mcp.elicitation import Elicit
from reactloop.tools.mcp.listing import Listed
from reactloop.tools.mcp.results import convert_result
from reactloop.tools.mcp.schematool import SchemaTool, any_arguments
from reactloop.tools.questions import AwaitingAnswer

SHUTDOWN_SECONDS = 8.0  # the SDK's own stdio shutdown takes at most about 4.5 s
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class MCPStartError(UsageError):
    """A server could not be started or did not list its tools."""


@dataclass(frozen=True, kw_only=True)
class MCPTool(SchemaTool):
    """A tool of an MCP server: arguments are checked against ``schema``, the server's own
    (``inline_schema``: exact, ``$ref``s inlined); the model is told ``portable``, the form
    every provider accepts, and adapters that accept more make theirs from ``schema``."""

    portable: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        return self.portable

    @cached_property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.portable,
            raw_parameters=self.schema,
        )


class MCPServers:
    """Start with ``with MCPServers(configs) as servers: servers.tools``; or ``start``/``close``.

    ``deadline`` returns when the run must end (``time.monotonic()``) or None; every limit is
    cut to it. By default it reads the run deadline the loop publishes to tools. ``elicit``
    answers the servers' questions to the user (``elicitation.py``), behind the answers a
    person gave for the call (``answering.py``); without it, the client does not say it can
    be asked.
    """

    def __init__(
        self,
        servers: Iterable[ServerConfig],
        *,
        reserved: Iterable[str] = (),
        dialect: str = "openai",
        deadline: Callable[[], float | None] | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        self.configs = unique_names(servers)
        self.elicit = (
            elicit if elicit is None or isinstance(elicit, Answering) else Answering(elicit)
        )
        self.reserved = frozenset(reserved)
        self.dialect = dialect
        self._deadline = deadline or run_deadline
        self._loop: BackgroundLoop | None = None
        self.connections: list[ServerConnection] = []
        self.tools: list[Tool] = []

    def __enter__(self) -> MCPServers:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> list[Tool]:
        """Start every server (together), list their tools; ``MCPStartError`` names a failure."""
        logging.getLogger("mcp").addHandler(logging.NullHandler())  # no SDK tracebacks on stderr
        self._loop = BackgroundLoop()
        self.connections = [
            ServerConnection(c, self._loop, self._deadline, self.elicit) for c in self.configs
        ]
        try:
            for connection in self.connections:
                connection.begin()
            listed = [(c, self._started(c, self.dialect)) for c in self.connections]
        except BaseException:
            self.close()
            raise
        self.tools = build_tools(listed, self.reserved, self.elicit)
        return self.tools

    @staticmethod
    def _started(connection: ServerConnection, dialect: str) -> list[Listed]:
        try:
            connection.finish()
            return connection.list_tools(dialect)
        except ServerFailure as exc:
            raise MCPStartError(str(exc)) from None

    def close(self, timeout: float = SHUTDOWN_SECONDS) -> None:
        """Stop every server and the loop; waits at most ``timeout`` s, Ctrl-C or not."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        waiting = [done for c in self.connections for done in c.request_close()]
        ends = time.monotonic() + timeout
        while waiting:
            try:
                concurrent.futures.wait(waiting, max(ends - time.monotonic(), 0))
                break
            except KeyboardInterrupt:  # a second Ctrl-C: the servers are still stopped
                continue
        loop.close()
        for connection in self.connections:
            connection.close_files()


def build_tools(
    listed: Iterable[tuple[ServerConnection, list[Listed]]],
    reserved: frozenset[str],
    answering: Elicit | None = None,
) -> list[Tool]:
    pairs = [(connection, tool) for connection, tools in listed for tool in tools]
    counts = Counter(_safe(tool.item.name) for _, tool in pairs)
    taken = set(reserved)
    built: list[Tool] = []
    for connection, tool in pairs:
        name = _safe(tool.item.name)
        if counts[name] > 1 or name in taken:
            name = _safe(f"{connection.name}_{tool.item.name}")
        base, number = name, 1
        while name in taken:
            number += 1
            name = f"{base[: MAX_NAME - 4]}_{number}"
        taken.add(name)
        built.append(_mcp_tool(connection, tool, name, answering))
    return built


def _mcp_tool(
    connection: ServerConnection, listed: Listed, name: str, answering: Elicit | None
) -> Tool:
    item, wrapped = listed.item, listed.wrapped
    annotations = item.annotations
    title = item.title or (annotations.title if annotations is not None else None)
    description = item.description or title or item.name
    read_only = annotations is not None and annotations.read_only_hint is True
    idempotent = annotations is not None and annotations.idempotent_hint is True
    remote = item.name

    def call(**arguments: Any) -> Any:
        if wrapped and isinstance(arguments.get(WRAPPED_KEY), dict):
            arguments = arguments[WRAPPED_KEY]
        with calling(answering, connection.name) as caller:
            result = connection.call(remote, arguments)
        if caller is not None and caller.waiting:  # its question waits for a person
            raise AwaitingAnswer(f"{connection.name}'s question waits for an answer")
        return convert_result(result, connection.name)

    call.__name__ = name
    return MCPTool(
        name=name,
        description=description,
        schema=listed.schema,
        portable=listed.portable,
        function=call,
        arguments_model=any_arguments(),
        read_only=read_only,
        idempotent=idempotent,
        defer=connection.config.defer,
    )


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name)[:MAX_NAME] or "tool"
