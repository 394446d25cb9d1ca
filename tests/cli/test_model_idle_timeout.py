"""A server that takes the request and never answers: the console says the model is waited for,
and ``--model-idle-timeout`` ends the run after that much silence, for all three protocols.

The server is a raw socket on 127.0.0.1 that reads the request and sends nothing (or, for the
stalled stream, its headers and one keep-alive, then nothing).
"""

from __future__ import annotations

import contextlib
import importlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import invoke
from reactloop import Agent, Limits, StopReason, read_journal
from reactloop.cli.model_record import recorded_model
from reactloop.errors import UsageError
from reactloop.models import ModelSettings, resolve_model

IDLE = 1.0  # --model-idle-timeout
SLACK = 2.5  # how far past it a run may end, start-up included (retries: `requests == 1`)
SSE_START = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: keep-alive\n\n"
SPECS = {  # protocol: (--model, the base URL's path)
    "chat": ("openai:m", "/v1"),
    "responses": ("responses:m", "/v1"),
    "anthropic": ("anthropic:m", ""),
}


@pytest.fixture(scope="module", autouse=True)
def _sdks_loaded() -> None:
    """Import the SDKs once, so that no timed run pays for it."""
    importlib.import_module("openai")
    importlib.import_module("anthropic")


class SilentServer:
    """Accepts, reads the request, sends ``first`` (nothing by default) and then nothing."""

    def __init__(self, first: bytes = b"") -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.first = first
        self.requests = 0
        self.closing = threading.Event()

    def accept(self) -> None:
        with contextlib.suppress(OSError):  # closed at the end of the test
            while True:
                connection, _ = self.listener.accept()
                threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection: socket.socket) -> None:
        with connection, contextlib.suppress(OSError):
            if connection.recv(65536):
                self.requests += 1
                connection.sendall(self.first)
            self.closing.wait()


@contextlib.contextmanager
def silent_server(first: bytes = b"") -> Iterator[SilentServer]:
    server = SilentServer(first)
    threading.Thread(target=server.accept, daemon=True).start()
    try:
        yield server
    finally:
        server.closing.set()
        server.listener.close()


@pytest.mark.parametrize("protocol", list(SPECS))
def test_a_silent_server_is_waited_for_aloud_then_given_up_on_after_the_idle_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    monkeypatch.setattr("reactloop.cli.waiting.WAITING_EVERY", 0.3)
    spec, path = SPECS[protocol]
    trace = tmp_path / "t.jsonl"
    with silent_server() as server:
        started = time.monotonic()
        code, _, err = invoke(
            "run", "look up a", "--model", spec, "--base-url", server.base_url + path,
            "--model-idle-timeout", str(IDLE), "--max-seconds", "60", "--trace", str(trace),
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert code == 1 and "Traceback" not in err
    assert "waiting for the model: 0.3 s" in err and "waiting for the model: 0.6 s" in err
    assert f"nothing came from {server.base_url}{path} for 1 s (the model idle timeout)" in err
    assert server.requests == 1, "silence past the idle timeout is not retried"
    assert IDLE <= elapsed < IDLE + SLACK, f"the run took {elapsed:.1f} s"
    events = read_journal(trace)
    assert events[0]["config"]["model_settings"]["idle_timeout"] == IDLE
    stop = events[-1]
    assert (stop["type"], stop["stop_reason"], stop["error_kind"]) == (
        "stop",
        "model_error",
        "timeout",
    )


def test_a_stream_that_stalls_after_its_headers_is_given_up_on_too(tmp_path: Path) -> None:
    with silent_server(first=SSE_START) as server:
        settings = ModelSettings(base_url=f"{server.base_url}/v1", stream=True, idle_timeout=IDLE)
        model = resolve_model("openai:m", settings)
        started = time.monotonic()
        result = Agent(model, [], limits=Limits(max_seconds=60)).run("hello")
        elapsed = time.monotonic() - started
    assert result.stop_reason is StopReason.MODEL_ERROR and result.error_kind == "timeout"
    assert "for 1 s (the model idle timeout)" in (result.error or "")
    assert server.requests == 1 and elapsed < IDLE + SLACK


def test_the_run_time_limit_still_wins_when_it_comes_first(tmp_path: Path) -> None:
    with silent_server() as server:
        settings = ModelSettings(base_url=f"{server.base_url}/v1", idle_timeout=30.0)
        model = resolve_model("responses:m", settings)
        result = Agent(model, [], limits=Limits(max_seconds=IDLE)).run("hello")
    assert result.stop_reason is StopReason.TIMEOUT
    assert "left in the run" in (result.error or "")


def test_resume_builds_the_model_with_the_recorded_idle_timeout() -> None:
    config = {"model_settings": {"base_url": "http://127.0.0.1:9/v1", "idle_timeout": 2.5}}
    # The base URL is given again (a recorded one is never sent to on the journal's word).
    model = recorded_model("openai:m", config, base_url="http://127.0.0.1:9/v1")
    assert model.line.attempt.idle_timeout == 2.5  # type: ignore[attr-defined]
    hostile = {"model_settings": {"idle_timeout": -1}}
    with pytest.raises(UsageError, match="idle_timeout must be a positive number"):
        recorded_model("openai:m", hostile, base_url=None)
