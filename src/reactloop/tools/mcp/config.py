"""Which MCP servers to start: ``--mcp 'COMMAND ARGS'``, ``--mcp-url URL`` and the
``mcpServers`` JSON other clients use (``command``, ``args``, ``env``, ``cwd``; or ``url``,
``headers`` and OAuth's ``auth`` and ``oauth``: ``oauth.py``), each with its three time
limits, and ``"defer": true`` for a server whose tools are found by ``search_tools``
(``reactloop.tools.search``). Every problem is a one-line ``UsageError``. A URL is streamable
HTTP, or the older HTTP+SSE transport when its path ends in ``/sse`` or its entry says
``"type": "sse"``.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reactloop.errors import UsageError
from reactloop.support.json_decode import read_json_file

STARTUP_SECONDS = 30.0
LIST_TOOLS_SECONDS = 15.0
CALL_SECONDS = 60.0
_TIMEOUT_KEYS = {
    "startupTimeout": STARTUP_SECONDS,
    "listToolsTimeout": LIST_TOOLS_SECONDS,
    "callTimeout": CALL_SECONDS,
}
_LAUNCHERS = {"npx", "uvx", "uv", "node", "python", "python3", "pipx", "bunx", "deno", "bun"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TRANSPORTS = ("stdio", "http", "streamable-http", "streamableHttp", "sse")
_AUTH = ("auto", "oauth", "none")
_OAUTH_KEYS = {"clientId", "clientSecret", "clientMetadataUrl", "scope", "grant", "privateKey"}
_OAUTH_KEYS |= {"signingAlgorithm", "tokenEndpointAuthMethod", "issuer"}
_GRANTS = ("authorization_code", "client_credentials")


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """One MCP server: a command to run (stdio) or a ``url`` (streamable HTTP, or the older
    HTTP+SSE transport with ``sse=True``).

    The time limits are in seconds: ``startup_timeout`` for the start and the handshake,
    ``list_tools_timeout`` for the whole tool listing, ``call_timeout`` for each call.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    sse: bool = False
    startup_timeout: float = STARTUP_SECONDS
    list_tools_timeout: float = LIST_TOOLS_SECONDS
    call_timeout: float = CALL_SECONDS
    defer: bool | None = None  # ``"defer": true``: its tools wait for ``search_tools``
    # "auto": probe the 2026-07-28 era, fall back to the handshake (remembered: eras.py);
    # "legacy": the handshake at once; a modern version ("2026-07-28"): that, no probe
    protocol: str = "auto"
    # OAuth (oauth.py): "auto" runs it on a 401 unless a header gives an Authorization;
    # "oauth" always; "none" never. ``oauth``: a pre-registered client, a scope, a grant
    auth: str = "auto"
    oauth: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise UsageError(f"MCP server {self.name!r} needs either a command or a url")
        if self.sse and self.url is None:
            raise UsageError(f"MCP server {self.name!r}: the SSE transport needs a url")
        if self.protocol not in ("auto", "legacy") and not _DATE.fullmatch(self.protocol):
            raise UsageError(
                f"MCP server {self.name!r}: protocol must be 'auto', 'legacy' or a version such"
                f" as '2026-07-28', not {self.protocol!r}"
            )
        if self.auth not in _AUTH:
            raise UsageError(
                f"MCP server {self.name!r}: auth must be 'auto', 'oauth' or 'none',"
                f" not {self.auth!r}"
            )

    @property
    def transport(self) -> str:
        if self.command is not None:
            return "stdio"
        return "sse" if self.sse else "http"

    def describe(self) -> str:
        if self.url is not None:
            return self.url
        return shlex.join([self.command or "", *self.args])


def stdio_server(command_line: str, *, name: str | None = None) -> ServerConfig:
    """A server from ``--mcp 'COMMAND ARGS'`` (split as a POSIX shell would, without a shell)."""
    try:
        words = shlex.split(command_line)
    except ValueError as exc:
        raise UsageError(f"--mcp {command_line!r}: {exc}") from None
    if not words:
        raise UsageError("--mcp needs a command, e.g. --mcp 'uvx mcp-server-time'")
    name = name or name_for_command(words)
    return ServerConfig(name=name, command=words[0], args=tuple(words[1:]))


def url_server(url: str, *, name: str | None = None) -> ServerConfig:
    """A server from ``--mcp-url URL``: streamable HTTP, or HTTP+SSE for a ``…/sse`` URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--mcp-url {url!r} is not an http:// or https:// URL")
    return ServerConfig(name=name or safe_name(parts.hostname), url=url, sse=is_sse_url(url))


def is_sse_url(url: str) -> bool:
    """Whether a URL names an HTTP+SSE endpoint (``http://host:3001/sse``), by the convention
    of the SDKs' servers."""
    return urlsplit(url).path.rstrip("/").endswith("/sse")


def name_for_command(words: list[str]) -> str:
    """``mcp-server-time`` for ``uvx mcp-server-time``, ``server-everything`` for
    ``npx -y @modelcontextprotocol/server-everything``: the program, not its launcher."""
    program = Path(words[0]).name
    if program in _LAUNCHERS or program.startswith("python"):
        rest = [w for w in words[1:] if not w.startswith("-") and w not in ("run", "-m")]
        if rest:
            program = rest[0]
    program = program.rsplit("/", 1)[-1].split("@", 1)[0] or program
    for suffix in (".py", ".js", ".mjs", ".ts"):
        program = program.removesuffix(suffix)
    return safe_name(program)


def safe_name(text: str) -> str:
    """A name that can prefix a tool name on every provider (letters, digits, ``_`` and ``-``)."""
    return _UNSAFE.sub("_", text).strip("_")[:32] or "mcp"


def unique_names(servers: Iterable[ServerConfig]) -> list[ServerConfig]:
    """The servers with clashing names made unique (``time``, ``time-2``, …)."""
    seen: set[str] = set()
    unique: list[ServerConfig] = []
    for server in servers:
        name, number = server.name, 1
        while name in seen:
            number += 1
            name = f"{server.name}-{number}"
        seen.add(name)
        unique.append(server if name == server.name else replace(server, name=name))
    return unique


def load_config(path: str | Path) -> list[ServerConfig]:
    """The servers of an ``mcpServers`` JSON file (Claude Desktop, Cursor and VS Code style)."""
    return parse_config(read_json_file(path, "MCP config file"), str(path))


def parse_config(data: Any, where: str = "MCP config") -> list[ServerConfig]:
    """The servers of a decoded ``{"mcpServers": {NAME: {...}}}`` object, disabled ones left out."""
    if not isinstance(data, dict):
        raise UsageError(f'{where} must be a JSON object with an "mcpServers" object')
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise UsageError(f'{where} has no "mcpServers" object')
    parsed = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: server {_shown(name)} must be a JSON object")
        if entry.get("disabled") is True:
            continue
        parsed.append(_server_entry(safe_name(name), entry, f"{where}: server {_shown(name)}"))
    return parsed


def _server_entry(name: str, entry: dict[str, Any], where: str) -> ServerConfig:
    defer = entry.get("defer")
    if defer is not None and not isinstance(defer, bool):
        raise UsageError(f"{where}: defer must be true or false, not {_shown(defer)}")
    return replace(_server(name, entry, where), defer=defer)


def _server(name: str, entry: dict[str, Any], where: str) -> ServerConfig:
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and kind not in _TRANSPORTS:
        raise UsageError(f"{where}: transport {_shown(kind)} is not supported (stdio, http or sse)")
    startup, listing, call = (
        _seconds(entry[key], f"{where}: {key}") if key in entry else default
        for key, default in _TIMEOUT_KEYS.items()
    )
    if "url" in entry:
        url = _text(entry["url"], f"{where}: url")
        if urlsplit(url).scheme not in ("http", "https"):
            raise UsageError(f"{where}: url {_shown(url)} is not an http:// or https:// URL")
        return ServerConfig(
            name=name,
            url=url,
            headers=_from_environment(
                _strings(entry.get("headers", {}), f"{where}: headers"), where
            ),
            sse=kind == "sse" or (kind is None and is_sse_url(url)),
            startup_timeout=startup,
            list_tools_timeout=listing,
            call_timeout=call,
            auth=entry.get("auth", "auto"),
            oauth=_oauth(entry.get("oauth", {}), where),
        )
    if "command" not in entry:
        raise UsageError(f'{where} needs a "command" or a "url"')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UsageError(f"{where}: args must be a list of strings")
    env = entry.get("env")
    cwd = entry.get("cwd")
    return ServerConfig(
        name=name,
        command=_text(entry["command"], f"{where}: command"),
        args=tuple(args),
        env=None if env is None else _strings(env, f"{where}: env"),
        cwd=None if cwd is None else _text(cwd, f"{where}: cwd"),
        startup_timeout=startup,
        list_tools_timeout=listing,
        call_timeout=call,
    )


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where} must be a non-empty string")
    return value


def _strings(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where} must be an object of strings")
    return {str(k): v for k, v in value.items()}


def _from_environment(
    headers: dict[str, str], where: str, what: str = "headers use"
) -> dict[str, str]:
    """Header values with ``${VAR}`` (or VS Code's ``${env:VAR}``) read from the environment,
    so that a token stays out of the file: ``"Authorization": "Bearer ${GITHUB_TOKEN}"``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise UsageError(f"{where}: {what} ${{{name}}}, which is not set")
        return os.environ[name]

    return {key: _VARIABLE.sub(value, text) for key, text in headers.items()}


def _oauth(value: Any, where: str) -> dict[str, str]:
    """An ``oauth`` object: its values may read the environment (``"${CLIENT_SECRET}"``)."""
    settings = _strings(value, f"{where}: oauth")
    unknown = sorted(set(settings) - _OAUTH_KEYS)
    if unknown:
        known = ", ".join(sorted(_OAUTH_KEYS))
        raise UsageError(f"{where}: oauth has {_shown(unknown[0])}, not one of {known}")
    grant = settings.get("grant", "authorization_code")
    if grant not in _GRANTS:
        raise UsageError(f"{where}: oauth's grant must be one of {', '.join(_GRANTS)}")
    secret = "clientSecret" in settings or "privateKey" in settings
    if grant == "client_credentials" and not ("clientId" in settings and secret):
        raise UsageError(f"{where}: oauth's {grant} grant needs a clientId and a clientSecret"
                         " or a privateKey")  # fmt: skip
    document = urlsplit(settings.get("clientMetadataUrl", "https://x/y"))
    if document.scheme != "https" or document.path in ("", "/"):
        raise UsageError(f"{where}: oauth's clientMetadataUrl must be an https:// URL with a path")
    return _from_environment(settings, where, "oauth uses")


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{where} must be a number of seconds")
    try:
        seconds = float(value)
    except OverflowError:  # an integer too large for a float
        seconds = math.inf
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"{where} must be a positive number of seconds")
    return seconds


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
