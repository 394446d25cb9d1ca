"""What the model is told about a tool (``ToolSpec``) and the calls it asks for (``ToolCall``):
their argument text decoded (``decode_arguments``), and a call's key for the loop guard
(``call_key``), made from its name and argument text alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reactloop.support.fast_init import fast_init
from reactloop.support.json_decode import MAX_DEPTH, JSONRefused, safe_loads
from reactloop.support.json_encode import canonical, dumps, safe_form


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: a name, a description and a JSON Schema.

    ``raw_parameters`` is the tool's own schema when ``parameters`` is a simplified copy that
    every provider accepts (an MCP tool's: ``$ref``s inlined, ``oneOf`` kept); an adapter whose
    provider takes more renders its own form of it (``reactloop.tools.mcp.schema_for``).
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)
    raw_parameters: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """A call the model asked for.

    ``id`` is unique within a run (our bookkeeping); ``wire_id`` is the id the provider sent,
    which may be missing, empty or repeated; None means the provider's id is ``id`` itself.
    ``echo_id`` is the id every adapter echoes back. ``arguments`` is
    the argument text exactly as the model wrote it (JSON for native calls; it may be invalid);
    a dict (or any other value) given instead is stored as its JSON text, None as ``""``.
    """

    id: str
    name: str
    arguments: str = ""
    wire_id: str | None = None

    def __post_init__(self) -> None:
        if not type(self.arguments) is type(self.name) is type(self.id) is str:
            _normalise_call(self)

    @property
    def echo_id(self) -> str:
        """The id to send back to the provider: its own, else (None, or ``""``: it sent none)
        the loop's."""
        return self.wire_id or self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "wire_id": self.wire_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            arguments=str(data.get("arguments") or ""),
            wire_id=data.get("wire_id"),
        )


class ArgumentsError(ValueError):
    """The argument text of a call is not a JSON object the harness accepts."""


def decode_arguments(text: str) -> dict[str, Any]:
    """The arguments of a call as a dict; ``ArgumentsError`` with a message for the model."""
    text = text.strip()
    if not text:
        return {}
    try:
        value = safe_loads(text)
    except JSONRefused as exc:
        if str(exc).startswith("nested deeper"):
            raise ArgumentsError(
                f"arguments are nested deeper than {MAX_DEPTH} levels; send a flatter object"
            ) from None
        raise ArgumentsError(f"arguments are not valid JSON ({exc}); send a JSON object") from None
    if not isinstance(value, dict):
        raise ArgumentsError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def call_key(name: str, text: str, arguments: dict[str, Any] | None) -> str:
    """The loop guard's key of a call of ``name`` with the argument text ``text``: the tool
    name and the canonical ``arguments`` (``decode_arguments``'s), or the text as written when
    they could not be decoded (None). ``PreparedCall.key``; the journal's fold makes it again
    from a ``tool_call`` event (``journal/guard_fold.py``): the toolbox has no part in it."""
    return f"{name}\x00{text.strip() if arguments is None else canonical(arguments)}"


def own_call_id(step: int, index: int = 0) -> str:
    """The id of a call that came without one (text ReAct, the local model, a script, a
    provider's empty id made unique by the loop): ``call_<step>_<index>``."""
    return f"call_{step}_{index}"


def _normalise_call(call: ToolCall) -> None:
    """Text fields from whatever an adapter or a test passed (a frozen value: set once, here)."""
    arguments: Any = call.arguments
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        try:
            arguments = dumps(arguments)
        except Exception:  # deep nesting, a cycle, a failing __str__: still an argument text
            arguments = dumps(safe_form(arguments, max_depth=MAX_DEPTH))
    object.__setattr__(call, "arguments", str(arguments))
    object.__setattr__(call, "name", _text(call.name))
    object.__setattr__(call, "id", _text(call.id))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    return "" if value is None else dumps(safe_form(value, max_depth=1))[:200].strip('"')
