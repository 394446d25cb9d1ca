"""OAuth against a real local OAuth-protected MCP server (``oauth_server.py``): ``reactloop run
--mcp-url`` authorizes once, keeps the token in the user's config folder (0600) and out of the
journal and the workspace, and the next run uses it without authorizing again; a server
that wants a user says so in one line without a terminal; in a terminal the browser is
opened and the loopback redirect catches the code. (The OAuth variants themselves are the
conformance suite's ``auth/*`` scenarios: test_mcp_conformance.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_helpers import HERE, PORT, served

from helpers import invoke
from reactloop import Toolbox, ToolCall, read_journal
from reactloop.tools.mcp import MCPServers, MCPStartError, ServerConfig, oauth_redirect

SERVER = HERE / "oauth_server.py"


def serve(*options: str) -> Iterator[str]:
    return served(SERVER, PORT, *options)


@pytest.fixture
def tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config" / "mcp-oauth"
    monkeypatch.setenv("REACTLOOP_MCP_TOKENS", str(folder))
    return folder


def stats(url: str) -> dict[str, int]:
    found: dict[str, int] = httpx.get(url.replace("/mcp", "/stats")).json()
    return found


def test_run_authorizes_once_and_keeps_the_token_out_of_the_journal(
    tokens: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = next(urls := serve())
    workspace = tmp_path / "work"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    script = tmp_path / "s.json"
    call = {"name": "echo", "arguments": {"text": "through OAuth"}}
    script.write_text(json.dumps([{"tool_calls": [call]}, "done"]))
    for run in ("first", "second"):
        trace = tmp_path / f"{run}.jsonl"
        code, out, err = invoke(
            "run", "q", "--model", f"scripted:{script}", "--mcp-url", url, "--trace", str(trace)
        )
        assert code == 0 and out.strip() == "done", err
        results = [r["result"] for r in read_journal(trace) if r["type"] == "tool_result"]
        assert results[0]["ok"] is True and "through OAuth" in json.dumps(results[0])
        assert stats(url) == {"authorizations": 1, "tokens": 1}  # the second run reuses it
    (kept,) = tokens.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o700
    token = json.loads(kept.read_text())["tokens"]["access_token"]
    assert token.startswith("tok-")
    for path in [*tmp_path.glob("*.jsonl"), *workspace.rglob("*")]:
        if path.is_file():
            assert token not in path.read_text(errors="replace"), path
    urls.close()


def test_without_a_terminal_a_server_that_wants_a_user_says_so(tokens: Path) -> None:
    url = next(urls := serve("--login"))
    with pytest.raises(MCPStartError) as refused:
        MCPServers([ServerConfig(name="guarded", url=url, startup_timeout=20)]).start()
    message = str(refused.value)
    assert message.startswith("MCP server 'guarded' needs authorization: it answered HTTP 401")
    assert "asks for a user to log in: run reactloop once in a terminal" in message
    assert "\n" not in message
    kept = [json.loads(path.read_text()) for path in tokens.glob("*.json")]
    assert all("tokens" not in entry for entry in kept)  # its registration only
    urls.close()


def test_in_a_terminal_the_browser_is_opened_and_the_redirect_caught(
    tokens: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = next(urls := serve("--login"))
    pages: list[str] = []
    browsers: list[threading.Thread] = []

    def user_allows(address: str) -> bool:  # the browser, and the user clicking "Allow"
        def click() -> None:
            pages.append(httpx.get(address + "&approve=1", follow_redirects=True).text)

        browsers.append(threading.Thread(target=click, daemon=True))
        browsers[0].start()
        return True

    monkeypatch.setattr(oauth_redirect, "_in_a_terminal", lambda: True)
    monkeypatch.setattr(oauth_redirect.webbrowser, "open", user_allows)
    with MCPServers([ServerConfig(name="guarded", url=url, startup_timeout=20)]) as servers:
        result = Toolbox(servers.tools).execute(
            ToolCall(id="1", name="echo", arguments='{"text": "hi"}')
        )
    assert result.ok and "hi" in result.to_content()
    browsers[0].join(10)
    assert "you can close this tab" in pages[0]
    assert "needs you to authorize reactloop; opening your browser at" in capsys.readouterr().err
    assert stats(url)["authorizations"] == 1
    urls.close()


def test_a_header_with_a_token_is_the_simple_path_and_oauth_stays_off(tokens: Path) -> None:
    url = next(urls := serve())
    config = ServerConfig(name="guarded", url=url, headers={"Authorization": "Bearer wrong"})
    with pytest.raises(MCPStartError, match="needs authorization: it answered HTTP 401"):
        MCPServers([config]).start()
    assert stats(url) == {"authorizations": 0, "tokens": 0}
    assert not os.path.exists(tokens)
    urls.close()


def test_the_loopback_redirect_takes_only_its_callback_and_says_a_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listener = oauth_redirect.LoopbackRedirect("s", interactive=lambda: True)
    answers: list[int] = []
    browsers: list[threading.Thread] = []

    def user_refuses(address: str) -> bool:
        def browse() -> None:
            base = listener.uri.rsplit("/", 1)[0]
            answers.append(httpx.get(base + "/favicon.ico").status_code)
            refused = "?error=access_denied&error_description=The+user+said+no"
            answers.append(httpx.get(listener.uri + refused).status_code)

        browsers.append(threading.Thread(target=browse, daemon=True))
        browsers[0].start()
        return True

    monkeypatch.setattr(oauth_redirect.webbrowser, "open", user_refuses)
    with socket.socket() as closed:  # an authorization server that cannot be reached
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}/authorize?x=1"
    try:
        asyncio.run(listener.redirect(nowhere))
        with pytest.raises(oauth_redirect.AuthorizationRefused, match="refused: The user said no"):
            asyncio.run(listener.callback())
    finally:
        listener.close()
    browsers[0].join(10)
    assert answers == [404, 200]
