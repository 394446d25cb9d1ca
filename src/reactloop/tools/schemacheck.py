"""Checking a tool's arguments against a JSON Schema of its own (``Tool.from_schema``).

Schemas are JSON Schema draft 2020-12, checked with the ``jsonschema`` package, imported when
the first schema tool is made. A failed check raises pydantic's ``ValidationError``, as a
tool made from a Python signature does, so that the model gets the usual ``invalid
arguments: where: what`` observation.
"""

from __future__ import annotations

from typing import Any

from reactloop.errors import MissingDependency
from reactloop.tools.schema_coerce import coerce_by_schema

MAX_SHOWN = 160  # characters of one error's message that the model sees


def schema_checker(schema: dict[str, Any], *, strict: bool) -> Any:
    """A draft 2020-12 validator for ``schema``. Not ``strict``: None when ``jsonschema`` is
    missing or ``schema`` is not valid JSON Schema (the arguments then go unchecked). ``strict``:
    ``MissingDependency`` and ``ValueError`` for those."""
    try:
        import jsonschema
    except ImportError:
        if not strict:
            return None
        raise MissingDependency(
            "a tool with a JSON Schema needs jsonschema: pip install 'reactloop[schema]'"
        ) from None
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except (jsonschema.SchemaError, RecursionError) as exc:
        if not strict:
            return None
        message = exc.message if isinstance(exc, jsonschema.SchemaError) else "nested too deeply"
        raise ValueError(f"not a valid JSON Schema: {message}") from None
    return jsonschema.Draft202012Validator(schema)


def checked_arguments(checker: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as keyword arguments, once ``checker`` (None: no check) accepts them.

    Arguments the schema refuses as they are get a second chance with their untyped strings
    read as the schema's types, and a ``null`` whose property defaults to ``null`` left out
    (``schema_coerce``); when that does not pass either, the first check's error is raised."""
    if checker is None:
        return dict(arguments)
    error = _first_error(checker, arguments)
    if error is None:
        return dict(arguments)
    converted = coerce_by_schema(arguments, checker.schema)
    if converted != arguments and _first_error(checker, converted) is None:
        return dict(converted)
    raise _validation_error(name, error, arguments)


def _first_error(checker: Any, arguments: dict[str, Any]) -> Any:
    import jsonschema

    try:
        return jsonschema.exceptions.best_match(checker.iter_errors(arguments))
    except RecursionError:
        return None  # too deep to check here: the tool (an MCP server) checks it


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
