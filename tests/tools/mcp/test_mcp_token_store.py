"""The OAuth token store (``token_store.py``): where it is, its permissions, one file per
server, a pre-registered client never written; and the ``auth``/``oauth`` config entries."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from reactloop.errors import UsageError
from reactloop.tools.mcp import ServerConfig, token_store
from reactloop.tools.mcp.config import parse_config
from reactloop.tools.mcp.oauth import uses_oauth

A, B = "https://a.example/mcp", "https://b.example/mcp"


def token(value: str) -> OAuthToken:
    return OAuthToken(access_token=value, token_type="Bearer", expires_in=60)


def client(client_id: str) -> OAuthClientInformationFull:
    return OAuthClientInformationFull(
        client_id=client_id, redirect_uris=[AnyUrl("http://127.0.0.1:1234/callback")]
    )


def test_the_folder_is_the_users_config_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REACTLOOP_MCP_TOKENS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert token_store.tokens_folder() == tmp_path / "xdg" / "reactloop" / "mcp-oauth"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert token_store.tokens_folder() == tmp_path / "home" / ".config" / "reactloop/mcp-oauth"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "tokens"
    monkeypatch.setenv("REACTLOOP_MCP_TOKENS", str(where))
    return where


def test_each_server_has_its_own_file_readable_by_the_user_alone(folder: Path) -> None:
    a, b = token_store.ServerTokens(A), token_store.ServerTokens(B)
    asyncio.run(a.set_tokens(token("for-a")))
    asyncio.run(a.set_client_info(client("client-a")))
    asyncio.run(b.set_tokens(token("for-b")))
    assert asyncio.run(a.get_tokens()).access_token == "for-a"
    assert asyncio.run(b.get_tokens()).access_token == "for-b"
    assert asyncio.run(a.get_client_info()).client_id == "client-a"
    assert asyncio.run(b.get_client_info()) is None
    files = sorted(folder.iterdir())
    assert len(files) == 2 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert all("example" not in f.name for f in files)  # named by a hash of the URL
    token_store.forget(A)
    assert asyncio.run(a.get_tokens()) is None
    assert asyncio.run(b.get_tokens()).access_token == "for-b"


def test_a_file_of_another_url_or_broken_is_not_read(folder: Path) -> None:
    asyncio.run(token_store.ServerTokens(A).set_tokens(token("for-a")))
    path = token_store.tokens_file(A)
    entry = json.loads(path.read_text())
    path.write_text(json.dumps({**entry, "url": B}))  # a hash collision, or a copied file
    assert asyncio.run(token_store.ServerTokens(A).get_tokens()) is None
    path.write_text("{not json")
    assert asyncio.run(token_store.ServerTokens(A).get_tokens()) is None
    path.write_text(json.dumps({"url": A, "tokens": {"access_token": 5}}))
    assert asyncio.run(token_store.ServerTokens(A).get_tokens()) is None


def test_a_preregistered_client_is_used_and_never_written(folder: Path) -> None:
    store = token_store.ServerTokens(A, client=client("from-config"))
    asyncio.run(store.set_client_info(client("from-config")))
    asyncio.run(store.set_tokens(token("t")))
    assert asyncio.run(store.get_client_info()).client_id == "from-config"
    assert "client" not in json.loads(token_store.tokens_file(A).read_text())
    asyncio.run(token_store.ServerTokens(A).set_client_info(client("kept")))
    assert asyncio.run(token_store.ServerTokens(A, keep_client=False).get_client_info()) is None


def test_auth_and_oauth_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET", "s3")
    entry = {"url": A, "auth": "oauth", "oauth": {"clientId": "me", "clientSecret": "${SECRET}"}}
    (config,) = parse_config({"mcpServers": {"a": entry}})
    assert config.auth == "oauth" and config.oauth == {"clientId": "me", "clientSecret": "s3"}
    with pytest.raises(UsageError, match="oauth has 'client_id', not one of"):
        parse_config({"mcpServers": {"a": {"url": A, "oauth": {"client_id": "me"}}}})
    with pytest.raises(UsageError, match="auth must be 'auto', 'oauth' or 'none'"):
        parse_config({"mcpServers": {"a": {"url": A, "auth": "yes"}}})
    for oauth, said in (
        ({"grant": "password"}, "grant must be one of authorization_code, client_credentials"),
        ({"grant": "client_credentials", "clientId": "me"}, "needs a clientId and a client"),
        ({"clientMetadataUrl": "http://example.org/me.json"}, "must be an https:// URL"),
    ):
        with pytest.raises(UsageError, match=said):
            parse_config({"mcpServers": {"a": {"url": A, "oauth": oauth}}})
    monkeypatch.delenv("SECRET")
    with pytest.raises(UsageError, match=r"oauth uses \$\{SECRET\}, which is not set"):
        parse_config({"mcpServers": {"a": entry}})


def test_who_gets_oauth() -> None:
    bearer = {"Authorization": "Bearer x"}
    assert uses_oauth(ServerConfig(name="a", url=A))
    assert not uses_oauth(ServerConfig(name="a", url=A, headers=bearer))
    assert uses_oauth(ServerConfig(name="a", url=A, headers=bearer, auth="oauth"))
    assert not uses_oauth(ServerConfig(name="a", url=A, auth="none"))
    assert not uses_oauth(ServerConfig(name="a", command="x"))
