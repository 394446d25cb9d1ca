"""Encoding JSON: reusable encoders for the loop's hot path (``json.dumps`` with options builds
a new encoder on every call), the journal's lines, the canonical form of arguments, and
``safe_form``, the guard for values the harness must write whatever they hold (nesting cut at a
depth, a node budget for cycles, leaves whose ``str`` fails named instead)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from reactloop.support.json_decode import JSONRefused, first_clause, nesting_exceeds

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
    (with ``json_decode.loads_units``); it never raises.

    orjson is ten times faster than the standard library, but it writes NaN and infinities as
    ``null`` and refuses big integers, lone surrogates, non-string keys and nesting beyond 254
    levels. So its line is kept only when it decodes back to a value equal to ``record``;
    otherwise the standard library writes the line (NaN as ``NaN``, each surrogate code point
    as its own escape). What no encoder can write (nesting beyond ``JOURNAL_DEPTH``, a cycle,
    a ``str`` that raises) is written in ``safe_form``. A caller that knows ``record``
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


_encoder = json.JSONEncoder(ensure_ascii=False, default=str)


def safe_dumps(value: Any) -> str:
    """``value`` (one a server sent) as JSON text, non-ASCII kept, unknown objects through
    ``str``; ``JSONRefused`` for nesting too deep to encode or an integer too long to write."""
    try:
        return _encoder.encode(value)
    except RecursionError:
        raise JSONRefused("the value is nested too deeply to encode as JSON") from None
    except (ValueError, TypeError) as exc:
        raise JSONRefused(f"the value cannot be encoded as JSON ({first_clause(exc)})") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """Spell every surrogate code point of a JSON text as its own ``\\uXXXX`` escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SCALARS = (str, bool, float, type(None))


def safe_form(value: Any, *, max_depth: int, max_nodes: int = 100_000) -> Any:
    """A copy of ``value`` that a JSON encoder writes without failing: containers deeper than
    ``max_depth`` (and beyond ``max_nodes`` in all), integers too long for text and objects
    whose ``str`` fails become strings that say so."""
    budget = [max_nodes]
    return _cut(value, max_depth, budget)


def _cut(value: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        return "<not written: the value is too large>"
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        return value if value.bit_length() < 10_000 or _has_text(value) else _LONG_INT
    if kind is dict or kind is list or kind is tuple:
        if depth <= 0:
            return "<not written: nested too deeply>"
        if kind is dict:
            return {_key(k): _cut(v, depth - 1, budget) for k, v in value.items()}
        return [_cut(v, depth - 1, budget) for v in value]
    return _text_of(value)


_LONG_INT = "<not written: an integer too long>"


def _has_text(value: int) -> bool:
    try:
        str(value)
    except ValueError:  # beyond sys.get_int_max_str_digits()
        return False
    return True


def _key(key: Any) -> str:
    return key if type(key) is str else _text_of(key)


def _text_of(value: Any) -> str:
    try:
        return str(value)
    except Exception as exc:  # a hostile __str__
        return f"<not written: str() of {type(value).__name__} raised {type(exc).__name__}>"
