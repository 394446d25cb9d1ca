"""The process's one deadline thread: it shuts connections down at their deadlines, in order,
leaves cancelled ones alone, and serves any number of guards with a single thread."""

from __future__ import annotations

import socket
import time

from reactloop.models.watchdog import Watchdog


def _wait_shut(connection: socket.socket) -> bytes:
    connection.settimeout(10)
    return connection.recv(1)  # b"" once the watchdog has shut it down


def test_a_connection_is_shut_down_at_its_deadline() -> None:
    watchdog = Watchdog()
    near, _far = socket.socketpair()
    with near, _far:
        deadline = time.monotonic() + 0.05
        watchdog.guard(near, deadline)
        assert _wait_shut(near) == b""
        assert time.monotonic() >= deadline


def test_a_cancelled_guard_leaves_its_connection_open() -> None:
    watchdog = Watchdog()
    kept, kept_peer = socket.socketpair()
    cut, cut_peer = socket.socketpair()
    with kept, kept_peer, cut, cut_peer:
        watchdog.guard(kept, time.monotonic() + 0.01).cancel()
        watchdog.guard(cut, time.monotonic() + 0.05)
        assert _wait_shut(cut) == b""  # the later deadline has passed, so the earlier one too
        kept_peer.sendall(b"x")
        kept.settimeout(10)
        assert kept.recv(1) == b"x"
        assert watchdog.pending == 0


def test_many_guards_one_thread_and_cancelled_entries_are_dropped() -> None:
    watchdog = Watchdog()
    pairs = [socket.socketpair() for _ in range(250)]
    try:
        far = time.monotonic() + 600
        watchdog.guard(pairs[0][0], far).cancel()
        thread = watchdog._thread
        for near, _ in pairs[1:]:
            watchdog.guard(near, far).cancel()
        assert watchdog._thread is thread and thread is not None and thread.is_alive()
        assert watchdog.pending == 0
        assert len(watchdog._heap) <= 2 * 64 + 2  # rebuilt, not grown with every call
    finally:
        for near, peer in pairs:
            near.close()
            peer.close()
