"""The protocol era each server spoke is remembered (``tools/mcp/eras.py``): a server of the
handshake era is not probed with the 2026-07-28 era's ``server/discover`` again at its next
start; a stateless 2026-07-28 server is remembered as modern. Both eras with real servers: a
handshake-only server over stdio, the SDK's stateless server over streamable HTTP."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp_helpers import HERE
from test_mcp_modern_http import serve

from reactloop import Toolbox, ToolCall
from reactloop.errors import UsageError
from reactloop.tools.mcp import MCPServers, ServerConfig
from reactloop.tools.mcp.eras import FILE_NAME, eras_file, server_key

HANDSHAKE = HERE / "handshake_server.py"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REACTLOOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("REACTLOOP_MCP_ERAS")  # the default place, in the cache folder
    return tmp_path / "cache"


def started(config: ServerConfig) -> tuple[str, str]:
    """The protocol version the client settled on, and what a call returned."""
    with MCPServers([config]) as servers:
        version = servers.connections[0]._client.protocol_version
        result = Toolbox(servers.tools).execute(
            ToolCall(id="1", name="echo", arguments='{"text": "hi"}')
        )
    return version, result.to_content()


def test_a_handshake_server_is_probed_once_then_started_with_the_handshake(
    cache: Path, tmp_path: Path
) -> None:
    methods = tmp_path / "methods.txt"
    config = ServerConfig(name="old", command=sys.executable, args=(str(HANDSHAKE), str(methods)))
    first = started(config)
    assert methods.read_text().split()[:2] == ["server/discover", "initialize"]
    assert json.loads((cache / FILE_NAME).read_text()) == {server_key(config): "handshake"}
    methods.unlink()
    assert started(config) == first == ("2025-06-18", first[1])
    assert "hi" in first[1]
    assert "server/discover" not in methods.read_text().split()  # no probe
    assert methods.read_text().split()[0] == "initialize"


def test_a_stateless_2026_server_is_remembered_as_modern(cache: Path) -> None:
    url = next(urls := serve())
    try:
        config = ServerConfig(name="modern", url=url, call_timeout=20)
        assert started(config)[0] == "2026-07-28"
        assert json.loads((cache / FILE_NAME).read_text()) == {server_key(config): "modern"}
        assert started(config)[0] == "2026-07-28"  # still probed: the probe is its era's way
    finally:
        urls.close()


def test_a_configured_protocol_is_used_as_given_and_not_remembered(
    cache: Path, tmp_path: Path
) -> None:
    methods = tmp_path / "methods.txt"
    args = (str(HANDSHAKE), str(methods))
    config = ServerConfig(name="old", command=sys.executable, args=args, protocol="legacy")
    assert started(config)[0] == "2025-06-18"
    assert "server/discover" not in methods.read_text().split()
    assert not (cache / FILE_NAME).exists()
    with pytest.raises(UsageError, match="protocol must be 'auto', 'legacy' or a version"):
        ServerConfig(name="x", command="x", protocol="newest")


def test_a_failed_start_with_the_remembered_handshake_forgets_it(cache: Path) -> None:
    config = ServerConfig(name="gone", command=sys.executable, args=("-c", "pass"),
                          startup_timeout=10)  # fmt: skip
    cache.mkdir()
    (cache / FILE_NAME).write_text(json.dumps({server_key(config): "handshake", "other": "modern"}))
    with pytest.raises(UsageError):
        MCPServers([config]).start()
    assert json.loads((cache / FILE_NAME).read_text()) == {"other": "modern"}


def test_reactloop_mcp_eras_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACTLOOP_MCP_ERAS", str(tmp_path / "mine.json"))
    assert eras_file() == tmp_path / "mine.json"
