"""``Tool`` and ``@tool``: a typed Python function becomes a tool the model can call.

The name, the description and each parameter's description come from the function's signature
and docstring, the JSON Schema from pydantic (``reactloop.tools.arguments``). Arguments are
validated before the function runs. A tool that comes with a JSON Schema of its own (an MCP
server's, a hand-written one) is made with ``Tool.from_schema`` and validated against that
schema (``reactloop.tools.schemacheck``). What a tool may know of its run is
``reactloop.tools.context``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self, overload

from reactloop.messages import ToolSpec
from reactloop.tools.arguments import (
    any_arguments,
    arguments_model_of,
    json_schema,
    parse_docstring,
)
from reactloop.tools.schemacheck import checked_arguments, schema_checker

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A callable the model may ask for.

    ``read_only`` tools have no side effects: they may run in parallel with each other and
    repeating them with the same arguments cannot change anything. ``side_effects`` tools
    (writes, commands) are the ones an approval policy asks about. ``bounded`` tools end
    within the run's time limit by themselves (their own timeout, or they cannot block): a
    sync one runs on the loop's thread, where the limit cannot abandon it; every other sync
    tool runs on a worker thread when the run has a time limit, so that it can be.
    ``idempotent`` tools have side effects, but running one twice with the same arguments
    leaves what running it once did: a resumed run runs such a call again when the run was
    killed while it ran (``reactloop.resume``); any other call with side effects is not.
    ``defer=True`` keeps the tool's schema out of the requests until ``search_tools`` finds
    it, ``False`` never defers it, None lets the toolbox decide (``reactloop.tools.search``).

    The arguments are described and validated by ``arguments_model`` (a pydantic model, made
    by ``@tool``), or by ``schema`` when one is given (a JSON Schema: ``from_schema``).
    """

    name: str
    description: str
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    read_only: bool = False
    bounded: bool = False
    schema: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    idempotent: bool = False
    defer: bool | None = None

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        schema: dict[str, Any],
        function: Callable[..., Any],
        *,
        read_only: bool = False,
        bounded: bool = False,
        strict: bool = True,
    ) -> Self:
        """A tool the model calls with arguments matching the JSON Schema ``schema``;
        ``function(**arguments)`` runs it (a plain or an ``async def`` function). The schema is
        sent to the model as it is, and the arguments are checked against it (draft 2020-12)
        before the call. ``strict=False`` keeps a schema that is not valid JSON Schema, or that
        cannot be checked without the ``jsonschema`` package, and leaves the arguments unchecked
        (the choice for an MCP server's tools: the server checks them too); ``strict`` makes
        that a ``ValueError`` (``MissingDependency`` without ``jsonschema``)."""
        if not isinstance(schema, dict):
            raise TypeError(
                f"tool {name!r}: the schema must be a dict, not {type(schema).__name__}"
            )
        if strict:
            schema_checker(schema, strict=True)
        return cls(
            name=name,
            description=description,
            function=function,
            arguments_model=any_arguments(),
            schema=schema,
            read_only=read_only,
            bounded=bounded,
        )

    @cached_property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        if self.schema is not None:
            return self.schema
        return json_schema(self.arguments_model)

    @cached_property
    def _validate(self) -> Callable[[Any], BaseModel]:
        return self.arguments_model.__pydantic_validator__.validate_python

    @cached_property
    def _checker(self) -> Any:
        """The validator of ``schema`` (None: not valid JSON Schema, or no ``jsonschema``)."""
        return None if self.schema is None else schema_checker(self.schema, strict=False)

    @cached_property
    def is_async(self) -> bool:
        """Whether calling the function gives a coroutine to await (``async def``)."""
        fn = self.function
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004  (an object with ``async def __call__``)
        )

    def ready(self) -> None:
        """Work out now what its first call would (whether it is async, its arguments'
        validator), so that a run's first call costs what a later one does; ``Toolbox`` calls
        it. A schema's checker is still built by the first call: it imports ``jsonschema``,
        which an agent whose schema tools (skills, an MCP server's) go uncalled does without."""
        self.is_async  # noqa: B018  (each one a cached property, computed here)
        if self.schema is None:
            self._validate  # noqa: B018

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments the function gets (pydantic's ``ValidationError`` propagates,
        for a schema's failed check too)."""
        if self.schema is not None:
            return checked_arguments(self._checker, self.name, arguments)
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
    idempotent: bool = False,
    defer: bool | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    bounded: bool = False,
    idempotent: bool = False,
    defer: bool | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a ``Tool``; usable as ``@tool`` or ``@tool(read_only=True)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        made = make_tool(
            fn, name=name, description=description, read_only=read_only, bounded=bounded
        )
        if idempotent or defer is not None:
            return dataclasses.replace(made, idempotent=idempotent, defer=defer)
        return made

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
        arguments_model=arguments_model_of(fn, tool_name, param_docs),
        read_only=read_only,
        bounded=bounded,
    )
