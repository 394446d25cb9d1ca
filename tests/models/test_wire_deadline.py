"""The run's time limit covers the whole exchange: connecting, sending, headers and body.

A raw server on 127.0.0.1 sends its reply's *headers* one byte every ``PACE`` seconds: each
read is quick, so no socket timeout fires, and a guard that starts once the headers have
arrived would never start. Through each SDK adapter (chat, Responses, Anthropic) and
``reactloop run``, the run must stop ``timeout`` within its limit plus a small grace, say so
truly, and leave no connection open behind it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop import Agent, Journal, Limits, StopReason, read_journal, tool
from reactloop.cli import main
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.responses import OpenAIResponsesModel

LIMIT = 1.5  # the runs' max_seconds
GRACE = 0.6  # how far past it a run may end (the CLI adds its own start-up)
PACE = 0.1  # seconds between two bytes of the headers: they would take 8 s in all
HEADERS = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n"


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


@pytest.fixture(scope="module", autouse=True)
def _sdks_loaded() -> None:
    """Import the SDKs once, so that no timed run pays for it."""
    importlib.import_module("openai")
    importlib.import_module("anthropic")


class Trickler:
    """A server whose every reply's headers come one byte at a time."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stopping = threading.Event()
        self.ended: list[threading.Event] = []  # one per connection: set when the client left

    def serve(self, connection: socket.socket, ended: threading.Event) -> None:
        with connection, contextlib.suppress(OSError):  # the client gave up: that is the point
            connection.recv(65536)
            for byte in HEADERS * 4:
                connection.sendall(bytes([byte]))
                if self.stopping.wait(PACE):
                    return
        ended.set()

    def accept(self) -> None:
        with contextlib.suppress(OSError):  # closed at the end of the test
            while True:
                connection, _ = self.listener.accept()
                self.ended.append(ended := threading.Event())
                threading.Thread(target=self.serve, args=(connection, ended), daemon=True).start()


@contextlib.contextmanager
def trickling_headers() -> Iterator[Trickler]:
    server = Trickler()
    threading.Thread(target=server.accept, daemon=True).start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.listener.close()


def _model(kind: str, base_url: str) -> OpenAIChatModel | OpenAIResponsesModel | AnthropicModel:
    if kind == "openai":
        return OpenAIChatModel(model="m", base_url=f"{base_url}/v1", sleep=lambda _: None)
    if kind == "responses":
        return OpenAIResponsesModel(model="m", base_url=f"{base_url}/v1", sleep=lambda _: None)
    return AnthropicModel(model="m", base_url=base_url, api_key="k", sleep=lambda _: None)


def assert_true_time_left(error: str) -> None:
    """The error names the time the run had left when the call began: at most the limit."""
    found = re.search(r"no complete reply from \S+ in the ([0-9.]+) s left in the run", error)
    assert found is not None, error
    assert LIMIT - 0.5 < float(found.group(1)) <= LIMIT


@pytest.mark.parametrize("kind", ["openai", "responses", "anthropic"])
def test_headers_trickled_a_byte_at_a_time_cannot_outlast_the_limit(
    tmp_path: Path, kind: str
) -> None:
    trace = tmp_path / "t.jsonl"
    with trickling_headers() as server:
        model = _model(kind, server.base_url)
        started = time.monotonic()
        with Journal(trace) as journal:
            limits = Limits(max_seconds=LIMIT, max_model_calls=3)
            result = Agent(model, [lookup], limits=limits, journal=journal).run("look up a")
        elapsed = time.monotonic() - started
        # the client closed every connection at the limit: the server's next byte fails
        assert server.ended and all(ended.wait(GRACE) for ended in server.ended)
    assert result.stop_reason is StopReason.TIMEOUT
    assert elapsed < LIMIT + GRACE, f"the run took {elapsed:.1f} s for a {LIMIT} s limit"
    assert_true_time_left(result.error or "")
    assert read_journal(trace)[-1]["type"] == "stop"


def test_cli_run_against_trickled_headers_ends_at_its_limit(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    with trickling_headers() as server:
        started = time.monotonic()
        outcome = CliRunner().invoke(
            main,
            ["run", "look up a", "--model", "openai:m", "--base-url", f"{server.base_url}/v1",
             "--max-seconds", str(LIMIT), "--trace", str(trace), "--json"],
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert outcome.exit_code == 1 and "Traceback" not in outcome.output
    payload = json.loads(outcome.stdout)
    assert payload["stop_reason"] == "timeout"
    assert_true_time_left(payload["error"])
    assert elapsed < LIMIT + GRACE + 0.5
    assert read_journal(trace)[-1]["type"] == "stop"
