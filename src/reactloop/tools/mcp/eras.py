"""Which protocol era each server spoke, remembered from run to run.

The SDK's client first probes a server with the 2026-07-28 era's ``server/discover`` and falls
back to the older ``initialize`` handshake when the server does not know it; a server that
leaves the probe unanswered costs its whole timeout at every start. So the era each
configured server spoke is kept (``$REACTLOOP_MCP_ERAS``, else ``mcp-eras.json`` in
``$REACTLOOP_CACHE_DIR``, else ``~/.cache/reactloop``; each server under a hash of its
transport, command line or URL, and folder: nothing the file holds names a server, a path or
a token), and a server that spoke the handshake era is started with the handshake at once. A
start that fails that way forgets it: the next start probes again (a server that was
upgraded). ``ServerConfig.protocol`` other than ``"auto"`` is the user's choice, and nothing
is remembered for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from reactloop.models.local.catalog import cache_dir
from reactloop.tools.mcp.config import ServerConfig

Era = Literal["handshake", "modern"]
FILE_NAME = "mcp-eras.json"


def eras_file() -> Path:
    configured = os.environ.get("REACTLOOP_MCP_ERAS")
    return Path(configured).expanduser() if configured else cache_dir() / FILE_NAME


def server_key(config: ServerConfig) -> str:
    where = f"{config.transport}\n{config.describe()}\n{config.cwd or ''}"
    return hashlib.sha256(where.encode()).hexdigest()[:32]


def connect_mode(config: ServerConfig) -> str:
    """The SDK client's ``mode`` for this server: the configured one, else ``"legacy"`` (the
    handshake, no probe) for a server remembered to speak that era, else ``"auto"``."""
    if config.protocol != "auto":
        return config.protocol
    return "legacy" if _read().get(server_key(config)) == "handshake" else "auto"


def era_of(protocol_version: str) -> Era:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    return "handshake" if protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else "modern"


def remember(config: ServerConfig, era: Era | None) -> None:
    """Keep ``era`` for this server (None forgets it); a file that cannot be written is left
    alone: the next start probes, as without it."""
    if config.protocol != "auto":
        return
    eras = _read()
    key = server_key(config)
    if eras.get(key) == era:
        return
    if era is None:
        eras.pop(key, None)
    else:
        eras[key] = era
    with contextlib.suppress(OSError):
        _write(eras)


def _read() -> dict[str, Any]:
    try:
        found = json.loads(eras_file().read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _write(eras: dict[str, Any]) -> None:
    path = eras_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-eras-")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(eras, out, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
