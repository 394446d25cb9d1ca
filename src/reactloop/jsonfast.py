"""JSON helpers: reusable encoders for the loop's hot path (``json.dumps`` with options builds a
new encoder on every call), and reading a user's JSON file with a clear error."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from reactloop.errors import UsageError
from reactloop.safejson import escape_surrogates, nesting_exceeds, safe_form
from reactloop.safejson import loads as loads  # re-exported: the fast decoder's old home

JOURNAL_DEPTH = 254
"""The deepest nesting of a journal line (orjson's own limit); deeper parts are cut."""

dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""Compact-enough JSON text, non-ASCII kept, unknown objects through ``str``."""

_std_canonical = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
).encode
_std_line = json.JSONEncoder(ensure_ascii=False, default=str).encode
# Dataclasses and dates go through ``default`` (``str``), as the standard library sends them.
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_LINE_OPTIONS = _PASSTHROUGH | orjson.OPT_APPEND_NEWLINE


def canonical(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces (for comparing arguments).

    orjson spells NaN and the infinities ``null``; a spelling with ``null`` in it therefore
    comes from the standard library, which keeps them apart.
    """
    try:
        text = orjson.dumps(value, default=str, option=_PASSTHROUGH | orjson.OPT_SORT_KEYS)
    except TypeError:  # big integers, lone surrogates, non-string keys, deep nesting
        return _canonical_text(value)
    return _canonical_text(value) if b"null" in text else text.decode()


def _canonical_text(value: Any) -> str:
    try:
        return _std_canonical(value)
    except Exception:  # nesting beyond the recursion limit, a cycle, a huge integer
        return _std_canonical(safe_form(value, max_depth=JOURNAL_DEPTH))


def json_line(record: Any, *, verify: bool = True) -> bytes:
    """``record`` as one line of UTF-8 JSON, newline included, that reads back equal to it
    (with ``safejson.loads_units``); it never raises.

    orjson is ten times faster than the standard library, but it writes NaN and infinities as
    ``null`` and refuses big integers, lone surrogates, non-string keys and nesting beyond 254
    levels. So its line is kept only when it decodes back to a value equal to ``record``;
    otherwise the standard library writes the line (NaN as ``NaN``, each surrogate code point
    as its own escape). What no encoder can write (nesting beyond ``JOURNAL_DEPTH``, a cycle,
    a ``str`` that raises) is written in ``safejson.safe_form``. A caller that knows ``record``
    holds no float but finite ones passes ``verify=False`` to skip the decoding.
    """
    try:
        line = orjson.dumps(record, default=str, option=_LINE_OPTIONS)
        if not verify or orjson.loads(line) == record:
            return line
    except Exception:  # any doubt: the standard library below
        pass
    try:
        text = _std_line(record)
    except Exception:  # RecursionError, a cycle, a failing __str__, a huge integer
        text = ""
    if not text or nesting_exceeds(text, JOURNAL_DEPTH):
        text = _std_line(safe_form(record, max_depth=JOURNAL_DEPTH))
    return (escape_surrogates(text) + "\n").encode("utf-8")


def is_plain(value: Any) -> bool:
    """True for a str, an int, a bool, None or a finite float: values orjson writes exactly."""
    kind = type(value)
    if kind is float:
        return bool(value - value == 0.0)  # NaN and the infinities give NaN
    return kind is str or kind is int or kind is bool or value is None


def json_number(value: Any) -> float | None:
    """A JSON number as a float; None for anything else (a bool, a string, an integer too big
    for a float). NaN and the infinities pass: callers that refuse them check."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON value in a user's file; any problem is a one-line ``UsageError`` naming ``what``."""
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
    except (ValueError, RecursionError) as exc:  # a number too long, nesting too deep
        raise UsageError(f"{what} {path} cannot be read: {exc}") from None
