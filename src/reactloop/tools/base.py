"""``Tool`` and ``@tool``: a typed Python function becomes a tool the model can call.

The name, the description and each parameter's description come from the function's signature
and docstring (Google ``Args:`` sections and reST ``:param x:`` lines are both understood); the
JSON Schema comes from pydantic. Arguments are validated before the function runs. A tool that
comes with a JSON Schema of its own (an MCP server's, a hand-written one) is made with
``Tool.from_schema`` and validated against that schema (``reactloop.tools.schemacheck``).

``ToolContext`` is what a tool family may know of the run it serves; ``run_deadline_scope``
tells the tools that honour it (``bash``, ``search``) when the run must end, so that none of
them outlives the run's time limit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, overload

from reactloop.messages import ToolSpec
from reactloop.tools.schemacheck import checked_arguments, schema_checker

if TYPE_CHECKING:
    from pydantic import BaseModel

    from reactloop.sandbox.command import Mode
    from reactloop.sandbox.rlimits import ResourceLimits

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
        arguments_model=_arguments_model(fn, tool_name, param_docs),
        read_only=read_only,
        bounded=bounded,
    )


@functools.cache
def any_arguments() -> type[BaseModel]:
    """The ``arguments_model`` of a tool made ``from_schema``: any keys (it is not used, the
    schema describes and checks the arguments; made once, on first use)."""
    from pydantic import ConfigDict, create_model

    model: type[BaseModel] = create_model("AnyArguments", __config__=ConfigDict(extra="allow"))
    return model


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


_RUN_DEADLINE: ContextVar[float | None] = ContextVar("reactloop_run_deadline", default=None)


def run_deadline() -> float | None:
    """When the current run must end (``time.monotonic()``), or None when it has no limit."""
    return _RUN_DEADLINE.get()


@contextlib.contextmanager
def run_deadline_scope(deadline: float | None) -> Iterator[None]:
    """Run a tool call with ``run_deadline()`` set (in the thread that runs the tool)."""
    token = _RUN_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _RUN_DEADLINE.reset(token)


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What tool families may need to know about the run they serve.

    ``sandbox_mode``, ``bash_limits`` and ``bash_max_output_chars`` are the ``bash`` family's;
    ``extra`` is for families of the user's own. The same settings given in ``extra`` under
    their names (before they were fields) are read into the fields."""

    notes: Path | None = None
    workspace: Path | None = None
    read_only: bool = False
    output_dir: Path | None = None
    sandbox_mode: Mode = "auto"
    bash_limits: ResourceLimits | None = None
    bash_max_output_chars: int = 3000
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _CONTEXT_FIELDS_ONCE_EXTRA:
            if name in self.extra and getattr(self, name) == _CONTEXT_DEFAULTS[name]:
                object.__setattr__(self, name, self.extra[name])


_CONTEXT_FIELDS_ONCE_EXTRA = ("sandbox_mode", "bash_limits", "bash_max_output_chars")
_CONTEXT_DEFAULTS: dict[str, Any] = {
    "sandbox_mode": "auto",
    "bash_limits": None,
    "bash_max_output_chars": 3000,
}
