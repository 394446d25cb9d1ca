"""Typed answers from a JSON Schema document instead of a Python type (``--output-schema``).

``Agent(..., output_type=JSONSchema(schema))`` asks for and validates answers like a Python
output type does; ``RunResult.output`` is then the decoded JSON value. Validation uses the
``jsonschema`` package (draft 2020-12 unless the schema names another), imported when a
``JSONSchema`` is built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reactloop.errors import MissingDependency, UsageError
from reactloop.output.spec import InvalidOutput
from reactloop.support.json_decode import read_json_file

_MAX_ERRORS_SHOWN = 5


class JSONSchema:
    """A JSON Schema as an output type; a schema that is not one is a ``UsageError``."""

    def __init__(self, schema: dict[str, Any]) -> None:
        try:
            import jsonschema
        except ImportError:
            raise MissingDependency(
                "an output schema needs jsonschema: pip install 'reactloop[schema]'"
            ) from None
        if not isinstance(schema, dict):
            raise UsageError(f"an output schema must be a JSON object, not {type(schema).__name__}")
        validator_class: Any = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
        try:
            validator_class.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise UsageError(f"not a valid JSON Schema: {exc.message}") from None
        self.schema = schema
        self._validator = validator_class(schema)

    @classmethod
    def from_file(cls, path: str | Path) -> JSONSchema:
        """The schema in ``path``; any problem is a one-line ``UsageError``."""
        schema = read_json_file(path, "output schema")
        try:
            return cls(schema)
        except UsageError as exc:
            if isinstance(exc, MissingDependency):
                raise
            raise UsageError(f"output schema {path}: {exc}") from None

    def validate(self, value: Any) -> Any:
        errors = sorted(self._validator.iter_errors(value), key=lambda e: [str(p) for p in e.path])
        if not errors:
            return value
        parts = [
            f"{'.'.join(str(p) for p in error.path) or 'answer'}: {error.message}"
            for error in errors[:_MAX_ERRORS_SHOWN]
        ]
        if len(errors) > _MAX_ERRORS_SHOWN:
            parts.append(f"and {len(errors) - _MAX_ERRORS_SHOWN} more")
        raise InvalidOutput("; ".join(parts))

    def dump(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)


def load_output_schema(path: str | Path) -> JSONSchema:
    """For ``reactloop run --output-schema FILE.json``: ``Agent(..., output_type=...)``."""
    return JSONSchema.from_file(path)
