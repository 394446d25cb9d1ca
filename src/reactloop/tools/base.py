"""``Tool`` and ``@tool``: a typed Python function becomes a tool the model can call.

The name, the description and each parameter's description come from the function's signature
and docstring (Google ``Args:`` sections and reST ``:param x:`` lines are both understood); the
JSON Schema comes from pydantic. Arguments are validated before the function runs.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, overload

from reactloop.messages import ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_GOOGLE_PARAM = re.compile(r"^\s+\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[\w\[\], ]+\s+)?(\w+)\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$|^\s*:(returns?|raises)")


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A callable the model may ask for.

    ``read_only`` tools have no side effects: they may run in parallel with each other and
    repeating them with the same arguments cannot change anything. ``side_effects`` tools
    (writes, commands) are the ones an approval policy asks about. ``bounded`` tools end
    within the run's time limit by themselves (their own timeout, or they cannot block): a
    sync one runs on the loop's thread, where the limit cannot abandon it; every other sync
    tool runs on a worker thread when the run has a time limit, so that it can be.
    """

    name: str
    description: str
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    read_only: bool = False
    bounded: bool = False

    @cached_property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        return json_schema(self.arguments_model)

    @cached_property
    def _validate(self) -> Callable[[Any], BaseModel]:
        return self.arguments_model.__pydantic_validator__.validate_python

    @cached_property
    def is_async(self) -> bool:
        """Whether calling the function gives a coroutine to await (``async def``)."""
        fn = self.function
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004  (an object with ``async def __call__``)
        )

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments the function gets (pydantic's ``ValidationError`` propagates)."""
        # The model forbids extra keys, so its ``__dict__`` holds exactly the parameters.
        values: dict[str, Any] = self._validate(arguments).__dict__
        return values

    def run(self, arguments: dict[str, Any]) -> Any:
        """Validate ``arguments`` and call the function (a coroutine for an async tool)."""
        return self.function(**self.validate(arguments))


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    bounded: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    bounded: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a ``Tool``; usable as ``@tool`` or ``@tool(read_only=True)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return make_tool(
            fn, name=name, description=description, read_only=read_only, bounded=bounded
        )

    return wrap(function) if function is not None else wrap


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    bounded: bool = False,
) -> Tool:
    summary, param_docs = parse_docstring(inspect.getdoc(fn) or "")
    tool_name = name or fn.__name__
    return Tool(
        name=tool_name,
        description=description or summary or tool_name,
        function=fn,
        arguments_model=_arguments_model(fn, tool_name, param_docs),
        read_only=read_only,
        bounded=bounded,
    )


def _arguments_model(
    fn: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> type[BaseModel]:
    from pydantic import ConfigDict, Field, create_model

    hints = _resolved_hints(fn)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name!r}: *args and **kwargs are not supported")
        annotation = hints.get(param.name, str)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=param_docs.get(param.name)))
    model_name = "".join(part.title() for part in tool_name.split("_")) + "Arguments"
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(model_name, __config__=config, **fields)
    return model


def _resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        import typing

        return typing.get_type_hints(fn, include_extras=True)  # keep Annotated metadata
    except Exception:  # unresolved forward references: fall back to raw annotations
        return dict(getattr(fn, "__annotations__", {}))


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its summary paragraph and per-parameter descriptions."""
    lines = doc.splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.match(line) or _REST_PARAM.match(line):
            break
        summary_lines.append(line.strip())
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args, current = True, None
            continue
        rest = _REST_PARAM.match(line)
        if rest:
            current = rest.group(1)
            params[current] = rest.group(2).strip()
            continue
        if _SECTION.match(line):
            in_args, current = False, None
            continue
        google = _GOOGLE_PARAM.match(line) if in_args else None
        if google:
            current = google.group(1)
            params[current] = google.group(2).strip()
        elif current and line.startswith((" ", "\t")) and line.strip():
            params[current] = f"{params[current]} {line.strip()}".strip()
        elif not line.strip():
            current = None
    return " ".join(summary_lines), params


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A compact JSON Schema for the arguments: no titles, nothing the model does not need."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _strip_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node
