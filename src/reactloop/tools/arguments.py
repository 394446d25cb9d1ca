"""A tool's arguments from its function: a pydantic model from the signature, each parameter's
description from the docstring (Google ``Args:`` sections and reST ``:param x:`` lines), and
the compact JSON Schema the model is sent.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_GOOGLE_PARAM = re.compile(r"^\s+\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[\w\[\], ]+\s+)?(\w+)\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$|^\s*:(returns?|raises)")


@functools.cache
def any_arguments() -> type[BaseModel]:
    """The ``arguments_model`` of a tool made ``from_schema``: any keys (it is not used, the
    schema describes and checks the arguments; made once, on first use)."""
    from pydantic import ConfigDict, create_model

    model: type[BaseModel] = create_model("AnyArguments", __config__=ConfigDict(extra="allow"))
    return model


def arguments_model_of(
    fn: Callable[..., Any], tool_name: str, param_docs: dict[str, str]
) -> type[BaseModel]:
    """The pydantic model of ``fn``'s parameters: no other keys, each described by the docstring."""
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
