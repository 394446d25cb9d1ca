"""A server that needs authorization: a 401 says so in one line, with its challenge and what
to do, not the SDK's "Server returned an error response"; a bearer token read from the
environment by the config file's ``${VAR}`` is sent and accepted. (This server's challenge names
no metadata it serves, so OAuth gets no token; OAuth itself: test_mcp_oauth.py and
test_mcp_conformance.py's auth scenarios, docs/mcp.md.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_mcp_modern_http import serve

from reactloop import Toolbox, ToolCall
from reactloop.errors import UsageError
from reactloop.tools.mcp import MCPServers, MCPStartError, ServerConfig, load_config


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    url = next(urls := serve("--token", "s3cret"))
    yield url
    urls.close()


def test_a_401_says_the_server_needs_authorization(guarded: str) -> None:
    with pytest.raises(MCPStartError) as refused:
        MCPServers([ServerConfig(name="guarded", url=guarded)]).start()
    message = str(refused.value)
    assert message.startswith("MCP server 'guarded' needs authorization: it answered HTTP 401 ")
    assert 'WWW-Authenticate: Bearer error="invalid_token"' in message
    assert '"Authorization": "Bearer ${TOKEN}"' in message
    assert "\n" not in message and "Server returned an error response" not in message


def test_a_bearer_token_from_the_environment_is_sent(
    guarded: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = {"url": guarded, "headers": {"Authorization": "Bearer ${env:GUARDED_TOKEN}"}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"guarded": entry}}))
    monkeypatch.setenv("GUARDED_TOKEN", "s3cret")
    (config,) = load_config(path)
    assert config.headers == {"Authorization": "Bearer s3cret"}
    with MCPServers([config]) as servers:
        result = Toolbox(servers.tools).execute(
            ToolCall(id="1", name="echo", arguments='{"text": "in"}')
        )
    assert result.ok and "in" in result.to_content()
    monkeypatch.delenv("GUARDED_TOKEN")
    with pytest.raises(UsageError, match=r"server 'guarded': headers use \$\{GUARDED_TOKEN\}"):
        load_config(path)
