"""The parent's side of the model process: start it, send a step, read the reply, see it die.

llama.cpp is native code: a crash inside it (a segfault in a CPU kernel, an abort on a failed
assertion) kills the process it runs in. Run there, it would take the harness and the journal
down with it; run here, in a child process the harness owns, it is one failed model call with a
clear message, and the run ends ``model_error`` with its journal complete. The child also lets
the run's time limit end a generation that would outlast it: past the limit (and a short grace
for the child to stop by itself) it is killed, and the next call starts a fresh one.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from reactloop.errors import MissingDependency, ModelError, UsageError
from reactloop.messages import ModelTurn
from reactloop.models.base import ModelRequest
from reactloop.models.local.cpu import cpu_flags, features_line
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.thought_stream import ThoughtStream
from reactloop.support.pipe_messages import receive, send

GRACE_SECONDS = 2.0  # past the time limit, the child has this long to stop by itself
STDERR_TAIL = 600  # characters of the child's stderr quoted when it dies
_ERRORS: dict[str, type[Exception]] = {
    "UsageError": UsageError,
    "MissingDependency": MissingDependency,
}


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def signal_hint(signum: int) -> str:
    """What to do about a death by ``signum``, as a clause to append to the message."""
    if signum == signal.SIGILL:
        return (
            "; llama.cpp's code was built for another CPU (xllamacpp's needs AVX2): run a "
            "llama-server built for this one and use --model llamacpp:NAME --base-url URL"
        )
    return "; `reactloop doctor` checks the embedded model on this CPU"


class ModelProcess:
    """One child process holding one loaded model; models that share it take turns (a lock)."""

    def __init__(self, path: Path, options: LocalOptions, *, load_timeout: float | None = None):
        self.path = path
        self.options = options
        self.lock = threading.Lock()
        self.info: dict[str, Any] = {}
        self.load_seconds = 0.0
        self._load_timeout = load_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._stderr: Any = None
        self.start()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        started = time.monotonic()
        parent, child = socket.socketpair()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "reactloop.models.local.worker", str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        child.close()
        self._conn = Connection(parent.detach())
        try:
            self._send(("load", str(self.path), self.options), "loading")
            reply = self._receive(self._deadline(self._load_timeout), "loading")
        except BaseException:
            self.stop()
            raise
        if reply[0] != "ready":
            self.stop()
            raise ModelError(
                f"the local model process sent {reply[0]!r} while loading", kind="server"
            )
        self.info = reply[1]
        self.load_seconds = time.monotonic() - started

    def stop(self) -> None:
        """End the child (politely: close its socket; then by force) and forget it."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
            if self.info.get("socket_folder"):
                shutil.rmtree(self.info["socket_folder"], ignore_errors=True)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def complete(
        self, key: int, name: str, options: LocalOptions, request: ModelRequest
    ) -> ModelTurn:
        """One step of one model (``key``), decoded under that model's own options."""
        with self.lock:
            self._ensure_running()
            fields = {
                "messages": list(request.messages),
                "tools": list(request.tools),
                "tool_choice": request.tool_choice,
                "stop": list(request.stop),
                "timeout": request.timeout,
                "step": request.step,
                "extra": dict(request.extra),
                "react": request.react,
                "stream": request.on_text is not None,
            }
            try:
                self._send(("complete", key, name, options, fields), f"step {request.step}")
                return self._reply(request)
            except BaseException:
                # The child is mid-step or gone: its next words would answer this call, not
                # the next one. Start afresh then.
                self.stop()
                raise

    def probe(self, prompt: str, max_tokens: int = 8) -> dict[str, Any]:
        with self.lock:
            self._ensure_running()
            self._send(("probe", prompt, max_tokens), "a probe")
            reply = self._receive(None, "a probe")
            return dict(reply[1])

    def _send(self, message: tuple[Any, ...], during: str) -> None:
        assert self._conn is not None
        try:
            send(self._conn, message)
        except (EOFError, OSError, ConnectionError):
            raise ModelError(self._death_message(f"before {during}"), kind="server") from None

    def _ensure_running(self) -> None:
        if self._proc is not None and self._proc.poll() is not None:
            death = self._death_message("between two calls")
            self.stop()
            raise ModelError(death, kind="server")
        if self._proc is None:
            self.start()

    def _reply(self, request: ModelRequest) -> ModelTurn:
        deadline = self._deadline(request.timeout, GRACE_SECONDS)
        on_text = request.on_text
        if on_text is not None and request.react is None:  # native: the JSON's thought only
            on_text = ThoughtStream(on_text)
        while True:
            message = self._receive(deadline, f"step {request.step}")
            if message[0] == "turn":
                turn: ModelTurn = message[1]
                return turn
            if message[0] == "raw" and request.on_raw is not None:
                request.on_raw(message[1])
            elif message[0] == "text" and on_text is not None:
                on_text(message[1])

    @staticmethod
    def _deadline(timeout: float | None, grace: float = 0.0) -> float | None:
        return None if timeout is None else time.monotonic() + max(timeout, 0.0) + grace

    def _receive(self, deadline: float | None, during: str) -> Any:
        assert self._conn is not None
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            if not self._conn.poll(left):
                raise ModelError(
                    f"the local model did not finish {during} within the run's time limit; "
                    "its process was stopped",
                    kind="server",
                )
            message = receive(self._conn)
        except (EOFError, OSError, ConnectionError):
            raise ModelError(self._death_message(f"during {during}"), kind="server") from None
        if message[0] == "error":
            error_type = _ERRORS.get(message[1], ModelError)
            raise error_type(message[2])
        return message

    def _death_message(self, when: str) -> str:
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        if code < 0:
            how = f"died with signal {-code} ({signal_name(-code)})"
            hint = signal_hint(-code)
        else:
            how, hint = f"exited with status {code}", ""
        tail = self._stderr_tail()
        return (
            f"the local model process {how} {when} ({self.path.name}; CPU: "
            f"{features_line(cpu_flags())}){hint}" + (f"; it said: {tail}" if tail else "")
        )

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0, 2)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - STDERR_TAIL))
        text = self._stderr.read().decode("utf-8", "replace")
        return " ".join(text.split())[-STDERR_TAIL:]
