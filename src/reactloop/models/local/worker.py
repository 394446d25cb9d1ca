"""The model process: ``python -m reactloop.models.local.worker FD``, driven over one socket.

The parent sends pickled tuples and reads pickled replies (both ends are reactloop's own):

- ``("load", path, options)`` → ``("ready", info)`` or ``("error", kind, message)``;
- ``("complete", session, name, options, fields)`` → any number of ``("raw", dict)`` and
  ``("text", str)``, then ``("turn", ModelTurn)`` or ``("error", kind, message)``;
- ``("probe", prompt, max_tokens)`` → ``("probe", dict)``: one plain completion, for doctor.

Ctrl-C is the parent's to handle: this process ignores SIGINT, and ends when the socket closes.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from reactloop.errors import ReactLoopError
from reactloop.models.base import ModelRequest
from reactloop.models.local.engines import choose_engine
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.session import Engine, Session
from reactloop.models.local.xllamacpp_engine import XllamacppEngine
from reactloop.support.pipe_messages import receive, send

MAX_SESSIONS = 32  # the least recently used session is forgotten past this
PARENT_CHECK_SECONDS = 0.5


def _error(exc: BaseException) -> tuple[str, str, str]:
    kind = type(exc).__name__ if isinstance(exc, ReactLoopError) else "ModelError"
    message = str(exc) if isinstance(exc, ReactLoopError) else f"{type(exc).__name__}: {exc}"
    return ("error", kind, message)


class Worker:
    def __init__(self, conn: Connection, engine: Engine) -> None:
        self.conn = conn
        self.engine = engine
        self.sessions: OrderedDict[int, Session] = OrderedDict()

    def session(self, key: int, name: str, options: LocalOptions) -> Session:
        session = self.sessions.get(key)
        if session is None:
            session = self.sessions[key] = Session(self.engine, options, name)
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        self.sessions.move_to_end(key)
        return session

    def complete(self, key: int, name: str, options: LocalOptions, fields: dict[str, Any]) -> None:
        stream = bool(fields.pop("stream", False))
        request = ModelRequest(
            **fields,
            on_raw=lambda raw: send(self.conn, ("raw", raw)),
            on_text=(lambda text: send(self.conn, ("text", text))) if stream else None,
        )
        try:
            turn = self.session(key, name, options).complete(request)
        except Exception as exc:
            send(self.conn, _error(exc))
            return
        send(self.conn, ("turn", turn))

    def probe(self, prompt: str, max_tokens: int) -> None:
        started = time.monotonic()
        try:
            text = self.engine.probe(prompt, max_tokens)
        except Exception as exc:
            send(self.conn, _error(exc))
            return
        send(self.conn, ("probe", {"text": text, "seconds": time.monotonic() - started}))

    def serve(self) -> None:
        while True:
            try:
                message = receive(self.conn)
            except (EOFError, OSError):
                return
            if message[0] == "complete":
                self.complete(message[1], message[2], message[3], message[4])
            elif message[0] == "probe":
                self.probe(message[1], message[2])


def load_engine(path: Path, options: LocalOptions) -> tuple[Engine, dict[str, Any]]:
    """The engine (``engines.py``) with ``path`` loaded, and what it reports."""
    choose_engine(options.engine)
    folder = Path(tempfile.mkdtemp(prefix="reactloop-llama-"))
    _OWNED.append(folder)  # removed at exit, even when the parent was killed
    engine = XllamacppEngine.load(path, options, folder)
    return engine, engine.info()


_OWNED: list[Path] = []  # folders this process made, to remove however it ends


def _end_with_parent(parent: int) -> None:
    """Exit when the parent is gone, even mid-generation or with the socket held open by
    another process the parent forked (EOF alone would then never come); the socket folder
    goes with it, since a killed parent cannot remove it."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    _remove_owned()
    os._exit(0)


def _remove_owned() -> None:
    for folder in _OWNED:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True).start()
    conn = Connection(int(argv[1]))
    try:
        _, path, options = receive(conn)
    except (EOFError, OSError):
        return 0
    try:
        engine, info = load_engine(Path(path), options)
    except BaseException as exc:
        _remove_owned()
        send(conn, _error(exc))
        return 1
    try:
        send(conn, ("ready", info))
        Worker(conn, engine).serve()
    except OSError:  # the parent is gone (a broken pipe mid-reply): end, and clean up
        pass
    finally:
        engine.close()
        _remove_owned()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
