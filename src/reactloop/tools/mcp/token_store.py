"""Where a remote MCP server's OAuth tokens and client registration are kept, per server.

One file per server URL (the OAuth resource), named by a hash of it, in
``$REACTLOOP_MCP_TOKENS``, else ``$XDG_CONFIG_HOME/reactloop/mcp-oauth``, else
``~/.config/reactloop/mcp-oauth``: the user's config folder, never a run's workspace or
journal. The folder is made ``0700`` and each file ``0600`` (written whole, then renamed),
so another user cannot read a token. ``ServerTokens`` is the SDK's ``TokenStorage``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

FOLDER_NAME = "mcp-oauth"


def tokens_folder() -> Path:
    configured = os.environ.get("REACTLOOP_MCP_TOKENS")
    if configured:
        return Path(configured).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "reactloop" / FOLDER_NAME


def tokens_file(server_url: str) -> Path:
    key = hashlib.sha256(server_url.encode()).hexdigest()[:32]
    return tokens_folder() / f"{key}.json"


def read_entry(server_url: str) -> dict[str, Any]:
    """What is kept for this server (``tokens``, ``client``), or nothing."""
    try:
        found = json.loads(tokens_file(server_url).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("url") != server_url:
        return {}
    return found


def write_entry(server_url: str, entry: dict[str, Any]) -> None:
    path = tokens_file(server_url)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path.parent, 0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tokens-")  # made 0600
    try:
        with os.fdopen(fd, "w") as out:
            json.dump({**entry, "url": server_url}, out, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def forget(server_url: str) -> None:
    """Drop what is kept for this server (its tokens and its registration)."""
    with contextlib.suppress(FileNotFoundError):
        tokens_file(server_url).unlink()


class ServerTokens:
    """The SDK's ``TokenStorage`` for one server, on its file. A ``client`` given here (a
    pre-registered client of the config) is used instead of any registration kept;
    ``keep_client=False`` ignores the kept one (its redirect port is taken: register anew)."""

    def __init__(self, server_url: str, client: Any = None, keep_client: bool = True) -> None:
        self.server_url = server_url
        self._client = client
        self._keep_client = keep_client

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return _model(OAuthToken, read_entry(self.server_url).get("tokens"))

    async def set_tokens(self, tokens: Any) -> None:
        self._update("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> Any:
        if self._client is not None or not self._keep_client:
            return self._client
        from mcp.shared.auth import OAuthClientInformationFull

        return _model(OAuthClientInformationFull, read_entry(self.server_url).get("client"))

    async def set_client_info(self, client_info: Any) -> None:
        if self._client is not None:
            self._client = client_info
            return
        self._update("client", client_info.model_dump(mode="json", exclude_none=True))

    def _update(self, key: str, value: dict[str, Any]) -> None:
        entry = read_entry(self.server_url)
        entry[key] = value
        write_entry(self.server_url, entry)


def _model(kind: Any, data: Any) -> Any:
    from pydantic import ValidationError

    if not isinstance(data, dict):
        return None
    try:
        return kind.model_validate(data)
    except ValidationError:
        return None
