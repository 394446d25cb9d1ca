"""A fake OpenAI-compatible HTTP server for tests: real sockets on 127.0.0.1, scripted replies.

Each POST takes the next scripted ``Reply`` (JSON bodies, error statuses with headers, delays,
SSE streams, streams that break off, dropped connections) and is recorded, so a test can assert
what the client sent::

    with FakeOpenAIServer([completion(content="Paris")]) as server:
        model = OpenAIChatModel(model="fake", base_url=server.base_url)
        ...
        assert server.requests[0].json["messages"][0]["role"] == "user"

``GET /v1/models`` answers without using the script. When the script runs out the server
answers HTTP 500 with a message that says so. Only the standard library is used.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reactloop.testing.openai_replies import Reply, as_reply, error_reply, json_reply


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The request body decoded as JSON (``None`` when it is empty)."""
        return json.loads(self.body) if self.body else None


Responder = Callable[[RecordedRequest], "Reply | None"]


class FakeOpenAIServer:
    """The server; use it as a context manager (or ``start()`` / ``stop()``)."""

    def __init__(
        self,
        replies: Iterable[Reply | Mapping[str, Any] | str] = (),
        *,
        responder: Responder | None = None,
        model: str = "fake-model",
        backlog: int = 128,
        port: int = 0,
    ) -> None:
        """``backlog``: connections waiting to be accepted (the standard library's 5 drops
        the connects of a client opening hundreds at once, each then retried a second later).
        ``port``: where it listens on 127.0.0.1; 0 (the default) takes a free one."""
        self.backlog = backlog
        self._bind_port = port
        self._replies = [as_reply(r) for r in replies]
        self._responder = responder
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake server is not running; use it in a with block")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return f"{self.url}/v1"

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def add(self, *replies: Reply | Mapping[str, Any] | str) -> FakeOpenAIServer:
        with self._lock:
            self._replies.extend(as_reply(r) for r in replies)
        return self

    def start(self) -> FakeOpenAIServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        server = type("Server", (ThreadingHTTPServer,), {"request_queue_size": self.backlog})
        self._server = server(("127.0.0.1", self._bind_port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"fake-openai-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.pop(0)
            number = len(self.requests)
        found = self._responder(request) if self._responder is not None else None
        if found is not None:
            return found
        message = f"fake server: no scripted reply left for request {number} ({request.path})"
        return error_reply(500, {"error": {"message": message, "type": "fake_server_error"}})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each keep-alive reply waits ~40 ms for a delayed ACK
    fake: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def handle(self) -> None:
        """Serve the connection; a client that resets or drops it (a test's client given up
        on, a killed process) ends it without a traceback on the test's output."""
        try:
            super().handle()
        except ConnectionError:
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": self.fake.model, "object": "model"}]}
            self._send(json_reply(body))
        else:
            self._send(error_reply(404, {"error": {"message": f"no route {self.path}"}}))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length) if length else b"",
        )
        self._send(self.fake.next_reply(request))

    def _send(self, reply: Reply) -> None:
        try:
            self._write(reply)
        except ConnectionError:  # the client gave up (a timeout test): nothing to answer
            self.close_connection = True

    def _write(self, reply: Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        if reply.disconnect:
            self._drop_connection()
            return
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for name, value in reply.headers.items():
            if name.lower() not in ("content-type", "content-length", "transfer-encoding"):
                self.send_header(name, value)
        if reply.pieces is None:
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._send_pieces(reply)

    def _send_pieces(self, reply: Reply) -> None:
        assert reply.pieces is not None
        for number, piece in enumerate(reply.pieces):
            if reply.break_after is not None and number >= reply.break_after:
                # announce a chunk, send half of it, hang up: an incomplete chunked body
                self.wfile.write(f"{len(piece) + 1:x}\r\n".encode() + piece[: len(piece) // 2])
                self.wfile.flush()
                self._drop_connection()
                return
            if reply.interval and number:
                time.sleep(reply.interval)
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop_connection(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for servers a test starts)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
