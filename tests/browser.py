"""A real headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a
pipe, for the tests of the pages reactloop writes (the viewer, the eval's index): open a page,
evaluate JavaScript in it, read its console errors, check a screenshot is not blank."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactloop import tool

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


HEADLESS_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed")

HOSTILE = "</textarea><script>document.title='pwned'</script><img src=x onerror=alert(1)>"


@tool(read_only=True)
def fetch(key: str) -> str:
    """Return a canned page for a key.

    Args:
        key: which page
    """
    return f"page {key}: {HOSTILE}"


class DevTools:
    """A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe``."""

    def __init__(self, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_fds() -> None:  # in the child: chrome reads fd 3 and writes fd 4
            read_end = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                *HEADLESS_FLAGS,
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,
            close_fds=False,  # our fds are non-inheritable (PEP 446); 3 and 4 must survive
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        reply = self._wait(lambda m: m.get("id") == self._next_id)
        assert "error" not in reply, f"{method}: {reply['error']}"
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait_event(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                self.events.remove(event)
                return event
        return self._wait(lambda m: m.get("method") == method, keep=False)

    def _wait(self, matches: Any, keep: bool = True, timeout: float = 60) -> dict[str, Any]:
        while True:
            for message in self._messages(timeout):
                if matches(message):
                    return message
                if "method" in message:
                    self.events.append(message)

    def _messages(self, timeout: float) -> Iterator[dict[str, Any]]:
        ready, _, _ = select.select([self._from_chrome], [], [], timeout)
        if not ready:
            raise TimeoutError("chromium did not answer")
        chunk = os.read(self._from_chrome, 1 << 20)
        if not chunk:
            raise RuntimeError("chromium closed the pipe")
        self._buffer += chunk
        *complete, self._buffer = self._buffer.split(b"\0")
        for raw in complete:
            yield json.loads(raw)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


def open_page(devtools: DevTools, url: str, width: int, height: int) -> str:
    target = devtools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = devtools.send("Target.attachToTarget", {"targetId": target, "flatten": True})
    sid = str(session["sessionId"])
    for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
        devtools.send(domain, session=sid)
    devtools.send(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": width,
            "height": height,
            "deviceScaleFactor": 1,
            "mobile": width < 600,
        },
        session=sid,
    )
    devtools.send("Page.navigate", {"url": url}, session=sid)
    devtools.wait_event("Page.loadEventFired")
    return sid


def evaluate(devtools: DevTools, sid: str, expression: str) -> Any:
    reply = devtools.send(
        "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=sid
    )
    assert "exceptionDetails" not in reply, reply
    return reply["result"].get("value")


def console_errors(devtools: DevTools, sid: str) -> list[dict[str, Any]]:
    devtools.send("Runtime.evaluate", {"expression": "1"}, session=sid)  # flush pending events
    errors = []
    for event in devtools.events:
        params = event.get("params", {})
        method = event.get("method")
        thrown = method == "Runtime.exceptionThrown"
        logged = method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert")
        entry = method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error"
        if thrown or logged or entry:
            errors.append(params)
    return errors


def png_pixels(data: bytes) -> tuple[int, int, int, bytes]:
    """Decode an 8-bit RGB/RGBA PNG into (width, height, channels, raw pixel bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    channels = 3 if color == 2 else 4
    return width, height, channels, unfilter(zlib.decompress(idat), width * channels, channels)


def unfilter(raw: bytes, stride: int, bpp: int) -> bytes:
    out = bytearray()
    previous = bytearray(stride)
    for row_start in range(0, len(raw), stride + 1):
        kind = raw[row_start]
        row = bytearray(raw[row_start + 1 : row_start + 1 + stride])
        if kind == 2:
            row = bytearray((a + b) & 0xFF for a, b in zip(row, previous, strict=True))
        elif kind in (1, 3, 4):
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                up = previous[i]
                if kind == 1:
                    row[i] = (row[i] + left) & 0xFF
                elif kind == 3:
                    row[i] = (row[i] + ((left + up) >> 1)) & 0xFF
                else:
                    corner = previous[i - bpp] if i >= bpp else 0
                    row[i] = (row[i] + paeth(left, up, corner)) & 0xFF
        out += row
        previous = row
    return bytes(out)


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def assert_not_blank(png: bytes, width: int, height: int) -> None:
    w, h, channels, pixels = png_pixels(png)
    assert (w, h) == (width, height)
    colors = {pixels[i : i + 3] for i in range(0, len(pixels), channels * 7)}
    background = pixels[:3]
    painted = sum(1 for i in range(0, len(pixels), channels * 7) if pixels[i : i + 3] != background)
    assert len(colors) > 20, f"only {len(colors)} colours: the page looks blank"
    assert painted / (len(pixels) / (channels * 7)) > 0.02, "almost every pixel is background"
