"""``mcpServers`` files, ``--mcp`` command lines and ``--mcp-url`` URLs: what they start, and a
one-line ``UsageError`` for everything else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop.errors import UsageError
from reactloop.tools.mcp import ServerConfig, load_config, stdio_server, url_server
from reactloop.tools.mcp.config import CALL_SECONDS, parse_config, unique_names
from reactloop.tools.mcp.opening import server_configs

CLAUDE_STYLE = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=UTC"]},
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"DEBUG": "1"},
            "cwd": "/tmp",
            "callTimeout": 5,
            "startupTimeout": 90,
        },
        "remote": {
            "type": "http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer x"},
            "listToolsTimeout": 2.5,
        },
        "off": {"command": "never", "disabled": True},
    }
}


def test_a_claude_desktop_style_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CLAUDE_STYLE))
    time, files, remote = load_config(path)
    assert (time.name, time.command, time.args) == (
        "time",
        "uvx",
        ("mcp-server-time", "--local-timezone=UTC"),
    )
    assert time.call_timeout == CALL_SECONDS and time.transport == "stdio"
    assert files.env == {"DEBUG": "1"} and files.cwd == "/tmp"
    assert (files.call_timeout, files.startup_timeout) == (5.0, 90.0)
    assert remote.transport == "http" and remote.headers == {"Authorization": "Bearer x"}
    assert remote.list_tools_timeout == 2.5


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], 'MCP config must be a JSON object with an "mcpServers" object'),
        ({"servers": []}, 'MCP config has no "mcpServers" object'),
        ({"mcpServers": {"a": 1}}, "MCP config: server 'a' must be a JSON object"),
        ({"mcpServers": {"a": {}}}, 'MCP config: server \'a\' needs a "command" or a "url"'),
        ({"mcpServers": {"a": {"command": ""}}}, "MCP config: server 'a': command must be a "),
        ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "args must be a list of strings"),
        ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, "env must be an object of"),
        ({"mcpServers": {"a": {"command": "x", "callTimeout": 0}}}, "callTimeout must be a pos"),
        ({"mcpServers": {"a": {"command": "x", "callTimeout": True}}}, "callTimeout must be a n"),
        ({"mcpServers": {"a": {"command": "x", "callTimeout": 10**400}}}, "must be a positive"),
        ({"mcpServers": {"a": {"type": "ws", "url": "ws://h/"}}}, "transport 'ws' is not supp"),
    ],
)
def test_what_is_refused_and_how_it_is_said(data: Any, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_config(data)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_missing_or_broken_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read MCP config file"):
        load_config(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(UsageError, match=r"MCP config file .* is not JSON"):
        load_config(broken)


@pytest.mark.parametrize(
    ("line", "name", "command", "args"),
    [
        ("uvx mcp-server-time", "mcp-server-time", "uvx", ("mcp-server-time",)),
        (
            "npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio",
            "server-everything",
            "npx",
            ("-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"),
        ),
        ("python -m my_server --port 3", "my_server", "python", ("-m", "my_server", "--port", "3")),
        ("/opt/bin/weather.py 'a b'", "weather", "/opt/bin/weather.py", ("a b",)),
    ],
)
def test_a_command_line_and_the_name_it_gets(
    line: str, name: str, command: str, args: tuple[str, ...]
) -> None:
    server = stdio_server(line)
    assert (server.name, server.command, server.args) == (name, command, args)


def test_bad_command_lines_and_urls() -> None:
    with pytest.raises(UsageError, match="--mcp needs a command"):
        stdio_server("  ")
    with pytest.raises(UsageError, match="No closing quotation"):
        stdio_server("server 'unclosed")
    with pytest.raises(UsageError, match="is not an http:// or https:// URL"):
        url_server("ftp://host/mcp")
    assert url_server("http://127.0.0.1:3001/mcp").name == "127_0_0_1"


def test_clashing_server_names_are_numbered() -> None:
    servers = server_configs(stdio=["uvx mcp-server-time", "uvx mcp-server-time --x"])
    assert [s.name for s in unique_names(servers)] == ["mcp-server-time", "mcp-server-time-2"]


def test_a_server_needs_a_command_or_a_url() -> None:
    with pytest.raises(UsageError, match="needs either a command or a url"):
        ServerConfig(name="x")


KEYS = [
    "mcpServers",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "cwd",
    "type",
    "callTimeout",
    "startupTimeout",
    "disabled",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(KEYS) | st.text(max_size=6),
            inner,
            max_size=5,
        )
    ),
    max_leaves=60,
)


def nest(levels: int) -> Any:
    value: Any = {"command": "x"}
    for _ in range(levels):
        value = {"mcpServers": {"s": value}}
    return value


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, JSON.map(lambda v: {"mcpServers": v}), st.integers(1, 2000).map(nest)))
def test_any_json_gives_servers_or_a_one_line_usage_error(data: Any) -> None:
    try:
        servers = parse_config(data)
    except UsageError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
        return
    for server in servers:
        assert (server.command is None) != (server.url is None)
        assert all(0 < t < float("inf") for t in (server.call_timeout, server.startup_timeout))


def test_the_older_sse_transport_is_chosen_by_type_or_by_a_sse_path() -> None:
    from reactloop.tools.mcp import url_server

    servers = parse_config(
        {
            "mcpServers": {
                "typed": {"type": "sse", "url": "http://h:1/events"},
                "by_path": {"url": "http://h:1/sse/"},
                "http": {"type": "http", "url": "http://h:1/sse"},
                "plain": {"url": "http://h:1/mcp"},
            }
        }
    )
    assert [s.transport for s in servers] == ["sse", "sse", "http", "http"]
    assert url_server("http://127.0.0.1:3001/sse").transport == "sse"
    assert url_server("http://127.0.0.1:3001/mcp").transport == "http"
    with pytest.raises(UsageError, match="the SSE transport needs a url"):
        ServerConfig(name="x", command="y", sse=True)
