"""``RegexProcess``: the harness's side of ``regex_worker``, with a hard deadline.

Every exchange with the worker waits at most until the deadline; then the worker is killed
and ``TimeoutError`` raised, so no pattern can hold a search past its time.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reactloop.errors import ToolError

__all__ = ["RegexProcess"]

WORKER = Path(__file__).with_name("regex_worker.py")


def _site_dir() -> str | None:
    try:
        import regex
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return str(Path(regex.__file__).resolve().parent.parent)


class RegexProcess:
    """A worker that matches ``pattern``; ``ToolError`` if the pattern does not compile."""

    def __init__(self, pattern: str, deadline: float) -> None:
        self.deadline = deadline
        site = _site_dir()
        argv = [sys.executable, "-I", "-S", str(WORKER), str(os.getpid())]
        argv += [site] if site else []
        self._process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={}, close_fds=True,
        )  # fmt: skip
        assert self._process.stdin is not None and self._process.stdout is not None
        self._in, self._out = self._process.stdin.fileno(), self._process.stdout.fileno()
        os.set_blocking(self._in, False)
        try:
            reply = self._ask(pattern.encode("utf-8", "surrogatepass"))
        except TimeoutError:
            raise ToolError(
                f"the regular expression {pattern!r} took too long to compile"
            ) from None
        except BaseException:
            self.close()
            raise
        if "error" in reply:
            self.close()
            raise ToolError(f"invalid regular expression {pattern!r}: {reply['error']}")

    def matching_lines(self, text: str, limit: int) -> list[tuple[int, str]]:
        """The lines of ``text`` with a match; ``TimeoutError`` once the deadline has passed."""
        reply = self._ask(b"%d\n" % limit + text.encode("utf-8", "surrogatepass"))
        if isinstance(reply, dict):
            raise ToolError(str(reply["error"]))
        return [(int(number), str(line)) for number, line in reply]

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _ask(self, payload: bytes) -> Any:
        self._send(len(payload).to_bytes(4, "big") + payload)
        size = int.from_bytes(self._receive(4), "big")
        return json.loads(self._receive(size))

    def _wait(self, fd: int, event: int) -> None:
        remaining = self.deadline - time.monotonic()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, event)
            if remaining <= 0 or not selector.select(remaining):
                self.close()
                raise TimeoutError("the regular expression ran out of time")

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._in, selectors.EVENT_WRITE)
            try:
                view = view[os.write(self._in, view) :]
            except BrokenPipeError:
                raise ToolError("the regular expression worker died") from None

    def _receive(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            self._wait(self._out, selectors.EVENT_READ)
            chunk = os.read(self._out, size - len(data))
            if not chunk:
                raise ToolError("the regular expression worker died (out of memory?)")
            data += chunk
        return bytes(data)
