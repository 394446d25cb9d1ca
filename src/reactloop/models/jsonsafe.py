"""JSON from outside the harness (providers, models), for the model adapters.

The mechanism is ``reactloop.safejson`` (one depth limit, one refusal for the whole harness);
this module adds what the adapters need on top of it: ``raw_decode`` (a value at a position of
a longer text, as in ``tool[{...}]`` or ``<tool_call>{...}``) and ``dumps`` (encoding a value a
server sent as an object). Every function raises only ``JSONError`` (``safejson.JSONRefused``,
a ``ValueError``) for what it refuses: invalid JSON, nesting deeper than ``MAX_DEPTH``
(``"[" * 100000`` would otherwise raise ``RecursionError``), an integer longer than the
interpreter converts (4,300 digits)::

    try:
        body = jsonsafe.loads(text)
    except jsonsafe.JSONError as exc:
        ...  # str(exc) says why, in one line
"""

from __future__ import annotations

import json
from typing import Any

from reactloop.safejson import MAX_DEPTH, nesting_exceeds, safe_loads
from reactloop.safejson import JSONRefused as JSONError

_decoder = json.JSONDecoder()
_encoder = json.JSONEncoder(ensure_ascii=False, default=str)


def loads(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, raising only ``JSONError``."""
    if not isinstance(text, str):
        raise JSONError(f"expected JSON text, got {type(text).__name__}")
    return safe_loads(text, max_depth=max_depth)


def raw_decode(text: str, start: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """The JSON value starting at ``start`` and where it ends, raising only ``JSONError``."""
    try:
        value, end = _decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise JSONError(f"{exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise JSONError(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise JSONError(_first_clause(exc)) from None
    if nesting_exceeds(text[start:end], max_depth):
        raise JSONError(f"nested deeper than {max_depth} levels")
    return value, end


def depth_exceeds(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether the JSON (or Python literal) ``text`` nests deeper than ``max_depth``."""
    return nesting_exceeds(text, max_depth)


def dumps(value: Any) -> str:
    """``value`` as JSON text (non-ASCII kept, unknown objects through ``str``), raising only
    ``JSONError`` (for nesting too deep to encode or an integer too long to write)."""
    try:
        return _encoder.encode(value)
    except RecursionError:
        raise JSONError("the value is nested too deeply to encode as JSON") from None
    except (ValueError, TypeError) as exc:
        raise JSONError(f"the value cannot be encoded as JSON ({_first_clause(exc)})") from None


def _first_clause(exc: BaseException) -> str:
    return str(exc).split(":", 1)[0][:200] or type(exc).__name__


__all__ = ["MAX_DEPTH", "JSONError", "depth_exceeds", "dumps", "loads", "raw_decode"]
