"""A client that resets its connection (a test's client given up on, a killed process) leaves
no traceback in the test's output: the fakes' handler threads used to print
``ConnectionResetError`` from ``socketserver`` (issue 36: 2 of 30 streamed runs).

Each case resets a keep-alive connection at one moment of the handler's life, then joins the
handler's thread, so that what it printed has been printed."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable

import pytest

from reactloop.testing import FakeAnthropicServer, FakeOpenAIServer, FakeResponsesServer
from reactloop.testing.openai_replies import sse_reply

BODY = json.dumps(
    {"model": "m", "max_tokens": 9, "stream": True, "messages": [{"role": "user", "content": "x"}]}
).encode()


def request(path: str, body: bytes = BODY, length: int | None = None) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body) if length is None else length}\r\n\r\n"
    )
    return head.encode() + body


def read_reply(conn: socket.socket) -> bytes:
    """One whole reply (its body chunked or sized), read off a keep-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    if b"transfer-encoding: chunked" in head:
        while not data.endswith(b"0\r\n\r\n"):
            data += conn.recv(65536)
        return data
    length = int(head.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
    while len(data.split(b"\r\n\r\n", 1)[1]) < length:
        data += conn.recv(65536)
    return data


def reset(conn: socket.socket) -> None:
    """Close with an RST, as a killed client's kernel does, not a FIN."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def while_waiting_for_the_next_request(conn: socket.socket, path: str) -> None:
    reset(conn)


def inside_a_request_body(conn: socket.socket, path: str) -> None:
    conn.sendall(request(path, b'{"str', length=100))
    reset(conn)


def inside_a_streamed_reply(conn: socket.socket, path: str) -> None:
    conn.sendall(request(path))
    assert conn.recv(1)  # the stream has begun; the next pieces come 0.2 s apart
    reset(conn)


FAKES = {
    "openai": (FakeOpenAIServer, "/v1/chat/completions"),
    "anthropic": (FakeAnthropicServer, "/v1/messages"),
    "responses": (FakeResponsesServer, "/v1/responses"),
}


@pytest.mark.parametrize("fake", FAKES)
@pytest.mark.parametrize(
    "moment", [while_waiting_for_the_next_request, inside_a_request_body, inside_a_streamed_reply]
)
def test_a_reset_connection_prints_nothing(
    fake: str, moment: Callable[[socket.socket, str], None], capsys: pytest.CaptureFixture[str]
) -> None:
    kind, path = FAKES[fake]
    slow = sse_reply([{"n": n} for n in range(5)], interval=0.2)
    with kind(responder=lambda _: slow) as server:
        before = set(threading.enumerate())
        conn = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        conn.sendall(request(path))
        assert read_reply(conn).startswith(b"HTTP/1.1 200")
        (handler,) = [t for t in threading.enumerate() if t not in before]
        moment(conn, path)
        handler.join(10)
        assert not handler.is_alive()
        assert server.requests  # it served the first request
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err and "Exception occurred" not in printed.err, printed.err
