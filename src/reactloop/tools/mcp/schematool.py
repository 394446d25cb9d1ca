"""``schema_tool``: a ``Tool`` from a name, a description, a raw JSON Schema and a callable.

``Tool`` builds its schema from a pydantic model of a Python signature; a tool that comes
with its own JSON Schema (an MCP server's) is a ``SchemaTool``: ``parameters`` is that schema
and ``validate`` checks arguments against it with ``jsonschema``, raising pydantic's
``ValidationError`` so that the error the model sees has the usual ``where: what`` form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from reactloop.tools.base import Tool

if TYPE_CHECKING:
    from pydantic import BaseModel

MAX_SHOWN = 160


@functools.cache
def any_arguments() -> type[BaseModel]:
    """Stands in for ``Tool.arguments_model``: a ``SchemaTool`` validates with its schema."""
    from pydantic import ConfigDict, create_model

    model: type[BaseModel] = create_model("AnyArguments", __config__=ConfigDict(extra="allow"))
    return model


@dataclass(frozen=True, kw_only=True)
class SchemaTool(Tool):
    schema: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @cached_property
    def parameters(self) -> dict[str, Any]:
        return self.schema

    @cached_property
    def _checker(self) -> Any:
        """A draft 2020-12 validator, or None when the schema is not valid JSON Schema."""
        try:
            import jsonschema  # with the mcp extra; without it the server alone checks
        except ImportError:
            return None
        try:
            jsonschema.Draft202012Validator.check_schema(self.schema)
        except (jsonschema.SchemaError, RecursionError):
            return None
        return jsonschema.Draft202012Validator(self.schema)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        checker = self._checker
        if checker is not None:
            error = _first_error(checker, arguments)
            if error is not None:
                raise _validation_error(self.name, error, arguments)
        return dict(arguments)


def schema_tool(
    name: str,
    description: str,
    schema: dict[str, Any],
    function: Callable[..., Any],
    *,
    read_only: bool = False,
) -> SchemaTool:
    """A tool the model calls with arguments matching ``schema``; ``function(**arguments)``."""
    return SchemaTool(
        name=name,
        description=description,
        schema=schema,
        function=function,
        arguments_model=any_arguments(),
        read_only=read_only,
    )


def _first_error(checker: Any, arguments: dict[str, Any]) -> Any:
    import jsonschema

    try:
        return jsonschema.exceptions.best_match(checker.iter_errors(arguments))
    except RecursionError:
        return None  # too deep to check here: the server checks it


def _validation_error(name: str, error: Any, arguments: dict[str, Any]) -> Exception:
    from pydantic_core import PydanticCustomError, ValidationError

    message = str(error.message)
    if len(message) > MAX_SHOWN:
        message = message[: MAX_SHOWN - 3] + "..."
    location = tuple(str(part) for part in error.absolute_path) or ("arguments",)
    detail = PydanticCustomError("json_schema", "{reason}", {"reason": message})
    return ValidationError.from_exception_data(
        f"{name} arguments", [{"type": detail, "loc": location, "input": arguments}]
    )
