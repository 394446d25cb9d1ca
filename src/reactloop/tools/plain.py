"""``plain_tool``: a built-in tool that needs no pydantic until a call's arguments are odd.

``make_tool`` builds a pydantic model of the function's signature, and importing pydantic and
building the model is most of what a short ``reactloop run`` pays at start-up. The built-in
tools take plain parameters (``str``, ``int``, ``float``, ``bool``, or one of them ``| None``),
so their JSON Schema is written here, key for key what pydantic would write
(``tests/tools/test_plain_tool.py`` compares them), and arguments of exactly those types are
taken as they are. Anything else (a missing or extra key, a ``"3"`` for an ``int``) goes to
the pydantic model, built on first need, so the model sees pydantic's usual errors and
coercions. A function with any other parameter type is an ordinary ``make_tool`` tool.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Mapping
from functools import cached_property
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any

from reactloop.tools.arguments import parse_docstring
from reactloop.tools.base import Tool, make_tool

if TYPE_CHECKING:
    from pydantic import BaseModel

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_MISSING = inspect.Parameter.empty


class _Param(typing.NamedTuple):
    name: str
    kind: type  # str, int, float or bool
    optional: bool  # ``kind | None``
    default: Any  # ``_MISSING`` when required
    description: str | None


class PlainTool(Tool):
    """A ``Tool`` whose ``parameters`` are written out and whose ``arguments_model`` (the
    pydantic model, for the calls the fast check does not take) is built on first use."""

    _params: tuple[_Param, ...]

    def __init__(
        self,
        function: Callable[..., Any],
        params: tuple[_Param, ...],
        *,
        name: str,
        description: str,
        read_only: bool,
        bounded: bool,
    ) -> None:
        given = {
            "name": name,
            "description": description,
            "function": function,
            "read_only": read_only,
            "bounded": bounded,
        }
        for item in dataclasses.fields(Tool):  # every field but the deferred one
            if item.name != "arguments_model":
                object.__setattr__(
                    self, item.name, given[item.name] if item.name in given else _default(item)
                )
        object.__setattr__(self, "_params", params)

    @cached_property
    def arguments_model(self) -> type[BaseModel]:
        full = make_tool(self.function, name=self.name, description=self.description)
        return full.arguments_model

    @cached_property
    def parameters(self) -> dict[str, Any]:
        params: tuple[_Param, ...] = self._params
        schema: dict[str, Any] = {
            "additionalProperties": False,
            "properties": {p.name: _property(p) for p in params},
        }
        required = [p.name for p in params if p.default is _MISSING]
        if required:
            schema["required"] = required
        schema["type"] = "object"
        return schema

    def ready(self) -> None:
        self.is_async  # noqa: B018  (not ``_validate``: it would build the pydantic model)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        params: tuple[_Param, ...] = self._params
        values = _plain_values(params, arguments)
        return values if values is not None else super().validate(arguments)


def _default(item: dataclasses.Field[Any]) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    raise TypeError(f"PlainTool does not know Tool's required field {item.name!r}")


def plain_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    read_only: bool = False,
    bounded: bool = False,
    description: str | None = None,
) -> Tool:
    """``make_tool(fn, ...)``, without pydantic for a function of plain parameters."""
    params = _plain_params(fn)
    if params is None:
        return make_tool(
            fn, name=name, description=description, read_only=read_only, bounded=bounded
        )
    summary, _ = parse_docstring(inspect.getdoc(fn) or "")
    tool_name = name or fn.__name__
    return PlainTool(
        fn,
        params,
        name=tool_name,
        description=description or summary or tool_name,
        read_only=read_only,
        bounded=bounded,
    )


def _plain_params(fn: Callable[..., Any]) -> tuple[_Param, ...] | None:
    """The parameters, when every one is plain (with a JSON default, if any); else None."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    _, docs = parse_docstring(inspect.getdoc(fn) or "")
    params = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            return None
        plain = _plain_type(hints.get(param.name, str))
        if plain is None or not _fits(param.default, *plain):
            return None
        params.append(_Param(param.name, *plain, param.default, docs.get(param.name)))
    return tuple(params)


def _plain_type(hint: Any) -> tuple[type, bool] | None:
    if hint in _JSON_TYPES:
        return hint, False
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        others = [arg for arg in typing.get_args(hint) if arg is not NoneType]
        if len(others) == 1 and others[0] in _JSON_TYPES and len(typing.get_args(hint)) == 2:
            return others[0], True
    return None


def _fits(value: Any, kind: type, optional: bool) -> bool:
    """Whether ``value`` is taken as it is for a parameter of this type (a default included)."""
    if value is _MISSING:
        return True
    return type(value) is kind or (optional and value is None)


def _plain_values(
    params: tuple[_Param, ...], arguments: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The function's keyword arguments, when every argument is of its exact type; else None."""
    values: dict[str, Any] = {}
    for param in params:
        if param.name in arguments:
            value = arguments[param.name]
            if not _fits(value, param.kind, param.optional):
                return None
            values[param.name] = value
        elif param.default is _MISSING:
            return None
        else:
            values[param.name] = param.default
    taken = len(values) - sum(p.name not in arguments for p in params)
    return values if taken == len(arguments) else None  # else an extra key: pydantic says so


def _property(param: _Param) -> dict[str, Any]:
    """Pydantic's JSON Schema of one field, without its title (keys in pydantic's order)."""
    json_type = {"type": _JSON_TYPES[param.kind]}
    prop: dict[str, Any] = {"anyOf": [json_type, {"type": "null"}]} if param.optional else {}
    if param.default is not _MISSING:
        prop["default"] = param.default
    if param.description is not None:
        prop["description"] = param.description
    if not param.optional:
        prop.update(json_type)
    return prop
