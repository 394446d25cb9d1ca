"""Typed answers: ``Agent(..., output_type=T)`` makes the final answer a validated ``T``.

``T`` is anything pydantic can validate: a pydantic model, a dataclass, a ``TypedDict``, or a
plain type like ``int`` or ``list[str]``. The model is asked for it in the way its protocol
allows: native tool calling gets a ``final_answer`` tool whose arguments are the answer (a
type that is not a JSON object travels as ``{"value": ...}``); text ReAct writes
``Finish[{...}]``; and a JSON value given as plain text, fenced or not, is accepted in both
(scripted and small models answer that way). An answer that does not validate becomes an
observation with the validation error, and the model tries again (``reactloop.loop.typed_answers``).

pydantic is imported when an ``OutputSpec`` is built, not when this module is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from reactloop.messages import ToolSpec
from reactloop.support.json_decode import JSONRefused, safe_loads

FINAL_TOOL = "final_answer"
_FENCE = re.compile(r"^```[\w-]*\s*\n(.*?)\n?```$", re.S)
_MAX_ERRORS_SHOWN = 5


class InvalidOutput(ValueError):
    """An answer that is not a value of the output type; the message is worded for the model."""


class OutputSpec:
    """What a typed answer must be: its JSON schema, and how to read one from a reply.

    ``tool`` says whether the answer is asked for as the ``final_answer`` tool (native tool
    calling); without it the model is told to answer with the JSON value itself: in
    ``Finish[...]`` (text ReAct), or, with ``json_reply``, as the whole reply, which the
    provider constrains to ``reply_schema`` (a model whose ``answers_json_schema`` is true).
    """

    def __init__(self, output_type: Any, *, tool: bool = True, json_reply: bool = False) -> None:
        self.output_type = output_type
        self.tool = tool and not json_reply
        self.json_reply = json_reply
        self.checker: Checker = (
            output_type
            if isinstance(output_type, Checker) and not isinstance(output_type, type)
            else TypeChecker(output_type)
        )
        self.schema: dict[str, Any] = self.checker.schema
        self.wrapped = self.schema.get("type") != "object"  # sent as {"value": ...}
        self.reply_schema = _tool_parameters(self.schema, self.wrapped)
        self.tool_spec = ToolSpec(
            name=FINAL_TOOL,
            description="Give the final answer. Its arguments are the answer; call it alone.",
            parameters=self.reply_schema,
        )
        self._specs: tuple[tuple[ToolSpec, ...], tuple[ToolSpec, ...]] | None = None

    def specs_with(self, specs: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
        """The tool specs a request sends: the toolbox's, and ``final_answer`` when asked."""
        if not self.tool:
            return specs
        cached = self._specs
        if cached is None or cached[0] is not specs:
            cached = self._specs = (specs, (*specs, self.tool_spec))
        return cached[1]

    def instructions(self) -> str:
        """The paragraph of the system message that asks for the answer's form."""
        if self.tool:
            return (
                f"When you know the answer, call the {FINAL_TOOL} tool, alone, with the answer "
                "as its arguments (a reply holding only the answer's JSON is accepted too)."
            )
        if self.json_reply:
            value = ' as {"value": ANSWER}' if self.wrapped else ""
            return (
                "When you know the answer, reply with the answer alone, as JSON in the "
                f"required format{value}, and call no tool."
            )
        schema = json.dumps(self.schema, ensure_ascii=False)
        return (
            "When you know the answer, write Finish[ANSWER], where ANSWER is the answer as "
            f"JSON matching this schema: {schema}"
        )

    def from_text(self, text: str, *, json_only: bool = False) -> Any:
        """The value a plain-text answer (or ``Finish[...]``'s argument) holds. A type that is
        not an object may be written bare (``42``, ``Paris``) unless ``json_only``."""
        body = _unfenced(text.strip())
        try:
            decoded = safe_loads(body)
        except JSONRefused as exc:
            decoded = self._embedded_object(body, exc, json_only)
        if self.wrapped and isinstance(decoded, dict) and set(decoded) == {"value"}:
            decoded = decoded["value"]
        return self.validate(decoded)

    def _embedded_object(self, body: str, refused: JSONRefused, json_only: bool) -> Any:
        start, end = body.find("{"), body.rfind("}")
        if start >= 0 and end > start:
            try:
                return safe_loads(body[start : end + 1])
            except JSONRefused:
                pass
        if self.wrapped and not json_only:
            return body  # validated as it is: "42" is an int, any text a str
        raise InvalidOutput(f"the answer holds no JSON object ({refused})")

    def from_arguments(self, arguments: str) -> Any:
        """The value a ``final_answer`` call's argument text holds."""
        try:
            decoded = safe_loads(arguments.strip() or "{}")
        except JSONRefused as exc:
            raise InvalidOutput(f"the arguments are not valid JSON ({exc})") from None
        if not isinstance(decoded, dict):
            raise InvalidOutput(f"the arguments must be a JSON object, not {_kind(decoded)}")
        if self.wrapped:
            if "value" not in decoded:
                raise InvalidOutput('the arguments must be {"value": ANSWER}')
            return self.validate(decoded["value"])
        return self.validate(decoded)

    def validate(self, value: Any) -> Any:
        return self.checker.validate(value)

    def dump(self, value: Any) -> str:
        """The value as JSON text (``RunResult.answer`` of an answer given by the tool)."""
        return self.checker.dump(value)


@runtime_checkable
class Checker(Protocol):
    """Validates answers against one schema: ``TypeChecker`` (a Python type, with pydantic)
    or ``reactloop.output.json_schema.JSONSchema`` (a JSON Schema document)."""

    schema: dict[str, Any]

    def validate(self, value: Any) -> Any:
        """The answer as a value; ``InvalidOutput`` saying why it is not one."""
        ...

    def dump(self, value: Any) -> str: ...


class TypeChecker:
    """A Python type's answers, validated by pydantic (imported here, on first use)."""

    def __init__(self, output_type: Any) -> None:
        from pydantic import TypeAdapter

        self._adapter: Any = TypeAdapter(output_type)
        self.schema: dict[str, Any] = self._adapter.json_schema()

    def validate(self, value: Any) -> Any:
        from pydantic import ValidationError

        try:
            return self._adapter.validate_python(value)
        except ValidationError as exc:
            raise InvalidOutput(describe(exc.errors())) from None

    def dump(self, value: Any) -> str:
        text: bytes = self._adapter.dump_json(value)
        return text.decode("utf-8")


def describe(errors: Sequence[Any]) -> str:
    parts = []
    for error in errors[:_MAX_ERRORS_SHOWN]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "answer"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    if len(errors) > _MAX_ERRORS_SHOWN:
        parts.append(f"and {len(errors) - _MAX_ERRORS_SHOWN} more")
    return "; ".join(parts)


def invalid_notice(error: str, *, tool: bool) -> str:
    how = f"call {FINAL_TOOL} again" if tool else "answer again"
    return f"Your answer does not match the required schema: {error}. Fix it and {how}."


def _tool_parameters(schema: dict[str, Any], wrapped: bool) -> dict[str, Any]:
    if not wrapped:
        return schema
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"value": inner},
        "required": ["value"],
        "additionalProperties": False,
    }
    if "$defs" in schema:  # "#/$defs/..." references resolve from the root
        parameters["$defs"] = schema["$defs"]
    return parameters


def _unfenced(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


def _kind(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
