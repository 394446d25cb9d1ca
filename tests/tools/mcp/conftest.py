"""Fixtures of the MCP tests: the servers they start."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra: pip install 'reactloop[mcp]'")

from mcp_helpers import EVERYTHING_JS, MISBEHAVING, TIME_SERVER

from reactloop.tools.mcp import ServerConfig


@pytest.fixture
def starts(tmp_path: Path) -> Path:
    return tmp_path / "starts.txt"


@pytest.fixture
def bad_server(starts: Path) -> Callable[..., ServerConfig]:
    """A ``ServerConfig`` for the misbehaving server, with its flags and limits."""

    def make(*flags: str, **limits: float) -> ServerConfig:
        args = (str(MISBEHAVING), "--starts", str(starts), *flags)
        return ServerConfig(name="bad", command=sys.executable, args=args, **limits)

    return make


@pytest.fixture
def time_server() -> ServerConfig:
    if not TIME_SERVER.exists():
        pytest.skip("mcp-server-time is not installed: pip install mcp-server-time")
    return ServerConfig(name="time", command=str(TIME_SERVER), env={"TZ": "UTC"})


@pytest.fixture
def everything() -> Path:
    if not EVERYTHING_JS.exists():
        pytest.skip("server-everything is not installed: npm ci --prefix tests/tools/mcp/node")
    return EVERYTHING_JS
