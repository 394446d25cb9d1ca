"""Pickled messages over a ``multiprocessing`` connection, without exported buffers.

``Connection.send`` pickles into a ``BytesIO`` and sends a memoryview of its buffer, and
``Connection.recv`` unpickles from another. When a send fails (the other process died), the
error's traceback keeps that view alive; if the error then sits in a reference cycle, CPython
before 3.12.7 can free the ``BytesIO`` first while collecting it and crash at exit
("deallocated BytesIO object has exported buffers", then SIGSEGV: python/cpython#77894,
#111049). These two send and read the same frames (a length, then the pickle) from plain bytes.
"""

from __future__ import annotations

import pickle
from multiprocessing.connection import Connection
from typing import Any


def send(connection: Connection, message: Any) -> None:
    connection.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))


def receive(connection: Connection) -> Any:
    return pickle.loads(connection.recv_bytes())
