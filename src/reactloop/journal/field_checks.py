"""How a typed event's fields are checked when a journal line is read (``schema.py``).

Each event class's checks are made once, from its annotations: a field without a default is
required; ``int`` is a whole number (never a bool), ``float`` any number, ``str`` (and a
``StrEnum``) a string, ``dict[...]`` an object, ``list[...]`` a list, ``X | None`` also null,
``Any`` anything. Nested values are left to the types that read them.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, TypeGuard, Union

FieldCheck = tuple[bool, Callable[[Any], bool], str]  # required, check, what it must be
_SPECS: dict[type, dict[str, FieldCheck]] = {}
_OWN = ("extra", "written")  # the base's bookkeeping, never a field of the line


def spec(cls: type) -> dict[str, FieldCheck]:
    """The checks of ``cls``'s fields, by name, in the order its line writes them."""
    found = _SPECS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = {}
        for f in dataclasses.fields(cls):
            if f.name in _OWN:
                continue
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            check, what = _check_for(hints[f.name])
            found[f.name] = (required, check, what)
        _SPECS[cls] = found
    return found


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


_SIMPLE: dict[Any, tuple[Callable[[Any], bool], str]] = {
    int: (is_int, "a whole number"),
    float: (is_number, "a number"),
    str: (_is_str, "a string"),
    bool: (lambda v: isinstance(v, bool), "true or false"),
}


def _check_for(hint: Any) -> tuple[Callable[[Any], bool], str]:
    if hint is Any:
        return (lambda v: True), "anything"
    origin = typing.get_origin(hint)
    if origin is dict:
        return (lambda v: isinstance(v, dict)), "an object"
    if origin is list:
        return (lambda v: isinstance(v, list)), "a list"
    if origin in (Union, types.UnionType):
        args = typing.get_args(hint)
        parts = [_check_for(arg) for arg in args if arg is not type(None)]
        nullable = type(None) in args
        what = " or ".join(dict.fromkeys(p[1] for p in parts)) + (" or null" if nullable else "")
        return _either([p[0] for p in parts], nullable=nullable), what
    if isinstance(hint, type) and issubclass(hint, str):  # a StrEnum: read as its string
        return _SIMPLE[str]
    return _SIMPLE[hint]


def _either(checks: list[Callable[[Any], bool]], *, nullable: bool) -> Callable[[Any], bool]:
    """One check of a union (most are ``X | None``: one check and null, the reader's most
    frequent, so without a loop)."""
    if len(checks) == 1:
        (only,) = checks
        return (lambda v: v is None or only(v)) if nullable else only
    return lambda v: (nullable and v is None) or any(check(v) for check in checks)


def short(value: Any) -> str:
    """``value`` as an error message shows it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
