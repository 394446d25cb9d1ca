"""The process that runs ``search``'s regular expression, so that the harness can kill it.

A pathological pattern (``(a|aa)+$``) can backtrack for minutes on a short line, and no
in-process timeout is a hard bound; a process is. Started as
``python -I -S regex_worker.py PARENT_PID [SITE_DIR]`` (standard library only, plus the
``regex`` package from ``SITE_DIR`` when given), it dies with its parent, reads frames from
stdin and answers each on stdout. A frame is a 4-byte big-endian length and that many bytes.

- the first frame is the pattern (UTF-8, lone surrogates passed through); the answer is
  ``{"ok": true}`` or ``{"error": "..."}``;
- each further frame is ``LIMIT\\n`` and a file's text; the answer is a JSON list of at most
  LIMIT ``[line_number, line]`` pairs (the lines with a match, each once), or
  ``{"error": "..."}`` when matching ran out of memory.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LINE_CHARS = 200
PR_SET_PDEATHSIG = 1
MEMORY_BYTES = 2 << 30  # a pattern that needs more fails with MemoryError, not the machine


def cut_line(line: str, limit: int = 2000) -> str:
    return line if len(line) <= limit else f"{line[:limit]}[… {len(line) - limit} chars cut]"


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (``regex`` when installed, else ``re``); ``ValueError`` if bad."""
    try:
        import regex as engine
    except ImportError:
        import re as engine
    try:
        return engine.compile(pattern, engine.MULTILINE)
    except (engine.error, OverflowError, RecursionError, ValueError, MemoryError) as exc:
        raise ValueError(str(exc)) from None


def matching_lines(compiled: Any, text: str, limit: int) -> list[list[Any]]:
    """``[line_number, line]`` for each line holding a match (each line once, at most limit)."""
    found: list[list[Any]] = []
    line_number, scanned, last_line = 1, 0, 0
    for match in compiled.finditer(text):
        line_number += text.count("\n", scanned, match.start())
        scanned = match.start()
        if line_number == last_line:
            continue
        last_line = line_number
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        line = text[start : end if end >= 0 else len(text)]
        found.append([line_number, cut_line(line.strip(), LINE_CHARS)])
        if len(found) >= limit:
            break
    return found


def _read_exact(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _read_frame() -> bytes:
    return _read_exact(int.from_bytes(_read_exact(4), "big"))


def _write_frame(value: Any) -> None:
    payload = json.dumps(value, ensure_ascii=True).encode()
    data = len(payload).to_bytes(4, "big") + payload
    while data:
        data = data[os.write(1, data) :]


def _die_with(parent: int) -> None:
    import ctypes
    import resource
    import signal

    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def main(argv: list[str]) -> None:
    _die_with(int(argv[1]))
    if len(argv) > 2:
        sys.path.append(argv[2])
    try:
        compiled = compile_pattern(_read_frame().decode("utf-8", "surrogatepass"))
    except ValueError as exc:
        _write_frame({"error": str(exc)})
        return
    _write_frame({"ok": True})
    while True:
        try:
            frame = _read_frame()
        except EOFError:
            return
        limit, _, text = frame.partition(b"\n")
        try:
            found: Any = matching_lines(compiled, text.decode("utf-8", "replace"), int(limit))
        except (MemoryError, RecursionError) as exc:
            found = {"error": f"the regular expression failed: {type(exc).__name__}"}
        _write_frame(found)


if __name__ == "__main__":
    main(sys.argv)
