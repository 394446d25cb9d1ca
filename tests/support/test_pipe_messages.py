"""Messages between processes: the same frames as ``Connection.send``, and a failed send whose
error holds no view of a ``BytesIO`` (collected in a cycle at exit, CPython < 3.12.7 crashed)."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from multiprocessing.connection import Connection
from types import TracebackType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.support.pipe_messages import receive, send

MESSAGES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@pytest.fixture
def pair() -> Iterator[tuple[Connection, Connection]]:
    left, right = socket.socketpair()
    a, b = Connection(left.detach()), Connection(right.detach())
    yield a, b
    a.close()
    b.close()


@given(message=MESSAGES)
def test_what_one_end_sends_the_other_reads_either_way(message: object) -> None:
    left, right = socket.socketpair()
    a, b = Connection(left.detach()), Connection(right.detach())
    try:
        send(a, message)
        assert b.recv() == message  # the frames multiprocessing's own reader expects
        b.send(message)
        assert receive(a) == message
    finally:
        a.close()
        b.close()


def views_of_buffers(traceback: TracebackType | None) -> Iterator[memoryview]:
    """The memoryviews a traceback's frames keep of anything but immutable bytes."""
    while traceback is not None:
        for value in traceback.tb_frame.f_locals.values():
            if isinstance(value, memoryview) and not isinstance(value.obj, bytes):
                yield value
        traceback = traceback.tb_next


def test_a_send_to_a_dead_process_fails_holding_no_exported_buffer(
    pair: tuple[Connection, Connection],
) -> None:
    ours, theirs = pair
    theirs.close()
    with pytest.raises(OSError) as failed:
        send(ours, ("load", "x" * 200_000))
    assert not list(views_of_buffers(failed.tb))  # ``Connection.send`` would keep one (a
    # ``BytesIO``'s, left for the collector: not made here, as it can crash CPython < 3.12.7)


def test_a_failed_send_kept_in_a_cycle_leaves_a_clean_exit() -> None:
    script = textwrap.dedent(
        """
        import socket
        from multiprocessing.connection import Connection
        from reactloop.support.pipe_messages import send

        def fail():
            left, right = socket.socketpair()
            connection = Connection(left.detach())
            right.close()
            try:
                send(connection, ("load", "x" * 200_000))
            except OSError as error:
                kept = error  # the error, its traceback, this frame: a cycle
            return kept

        held = fail()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
