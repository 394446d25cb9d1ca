"""JSON helpers: reusable encoders for the loop's hot path (``json.dumps`` with options builds a
new encoder on every call), and reading a user's JSON file with a clear error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""Compact-enough JSON text, non-ASCII kept, unknown objects through ``str``."""

canonical: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
).encode
"""One spelling per value: sorted keys, no spaces (for comparing arguments)."""


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON value in a user's file; any problem is a one-line ``UsageError`` naming ``what``."""
    from reactloop.errors import UsageError

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{what} {path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not JSON: {exc.msg} (line {exc.lineno})") from None
