"""Decoding JSON that anyone may have written: a model, a tool, a provider, a damaged file, a
user's own file (``read_json_file``).

``safe_loads`` never raises anything but ``JSONRefused``: text nested deeper than a limit is
refused before the decoder sees it (the standard library's decoder recurses, and 100,000
``[`` would raise ``RecursionError``), and an integer too long to convert (more than
``sys.get_int_max_str_digits()`` digits) is refused instead of raising ``ValueError``.

The journal escapes each surrogate code point on its own (``\\ud83d`` then ``\\ude00`` for
two code points); ``loads_units`` reads such a text back without joining the pair, so a
string reads back exactly as it was written.
"""

from __future__ import annotations

import itertools
import json
import re
import types
from collections.abc import Callable
from json.decoder import JSONDecoder
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from reactloop.errors import UsageError

MAX_DEPTH = 128
"""The deepest nesting the harness accepts in a value from a model or a tool."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONRefused(ValueError):
    """JSON text that was not decoded: not JSON, nested too deeply, or a number too long."""


def nesting_exceeds(text: str, limit: int) -> bool:
    """Whether the JSON ``text`` nests arrays and objects deeper than ``limit`` levels."""
    if len(text) <= limit:
        return False
    if text.count("[") + text.count("{") <= limit:
        return False
    bare = _STRING.sub("", text) if '"' in text else text
    deltas = map(_DELTA.__getitem__, _BRACKET.findall(bare))
    return max(itertools.accumulate(deltas), default=0) > limit


_decoder = json.JSONDecoder()
_scan_json: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]


def loads(text: str) -> Any:
    """``json.loads(text)`` for a text without surrounding whitespace, in one call to C when it
    parses (``json.loads`` makes five); its errors are ``json.loads``'s own."""
    try:
        value, end = _scan_json(text, 0)
    except (StopIteration, ValueError):
        end = -1
    return value if end == len(text) else json.loads(text)


def safe_loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, or ``JSONRefused`` with a message a model can act on."""
    if type(text) is not str and not isinstance(text, str):
        raise JSONRefused(f"expected JSON text, got {type(text).__name__}")
    if len(text) > max_depth and nesting_exceeds(text, max_depth):  # short: cannot be deep
        raise JSONRefused(f"nested deeper than {max_depth} levels")
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise JSONRefused(f"{exc.msg} at position {exc.pos}") from None
    except (ValueError, RecursionError) as exc:  # an integer beyond the digit limit
        raise JSONRefused(first_clause(exc)) from None


def raw_decode(text: str, start: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """The JSON value starting at ``start`` of a longer text (``tool[{...}]``,
    ``<tool_call>{...}``) and where it ends, raising only ``JSONRefused``."""
    try:
        value, end = _decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise JSONRefused(f"{exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise JSONRefused(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise JSONRefused(first_clause(exc)) from None
    if nesting_exceeds(text[start:end], max_depth):
        raise JSONRefused(f"nested deeper than {max_depth} levels")
    return value, end


def first_clause(exc: BaseException) -> str:
    return str(exc).split(":", 1)[0][:200] or type(exc).__name__


# Reading one \uXXXX escape as one code point: surrogate pairs are not joined.
_STRING_BODY = re.compile(r'([^"\\]*(?:\\.[^"\\]*)*)"', re.S)
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(match: re.Match[str]) -> str:
    code, simple = match.groups()
    return chr(int(code, 16)) if code is not None else _SIMPLE[simple]


def _scan_units(text: str, end: int, strict: bool = True) -> tuple[str, int]:
    match = _STRING_BODY.match(text, end)
    if match is None:
        raise json.JSONDecodeError("Unterminated string", text, end - 1)
    return _ESCAPE.sub(_unescape, match.group(1)), match.end()


# The standard library's object parser, reading its keys with ``_scan_units`` too: the same
# code with ``scanstring`` bound to ours (keys are strings like any other).
_JSONObject: Any = vars(json.decoder)["JSONObject"]
_parse_object_units = types.FunctionType(
    _JSONObject.__code__,
    {**vars(json.decoder), "scanstring": _scan_units},
    "_parse_object_units",
    _JSONObject.__defaults__,
)


class _UnitsDecoder(JSONDecoder):
    def __init__(self) -> None:
        super().__init__()
        self.parse_string = _scan_units
        self.parse_object = _parse_object_units
        self.scan_once = py_make_scanner(self)


_units_decoder = _UnitsDecoder()
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def loads_units(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``safe_loads``, except that each ``\\uD800``–``\\uDFFF`` escape is one code point."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return safe_loads(text, max_depth=max_depth)
    if nesting_exceeds(text, max_depth):
        raise JSONRefused(f"nested deeper than {max_depth} levels")
    try:
        return _units_decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise JSONRefused(f"{exc.msg} at position {exc.pos}") from None
    except (ValueError, RecursionError) as exc:
        raise JSONRefused(first_clause(exc)) from None


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
