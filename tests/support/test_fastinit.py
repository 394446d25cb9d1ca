"""``fast_init``: the faster ``__init__`` of the loop's frozen values behaves like the one
``dataclasses`` writes (signature, defaults, factories, ``__post_init__``, frozen)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, Usage
from reactloop.support.fast_init import fast_init

FAST = (Usage, ToolCall, ToolResult, Message, ModelTurn)


def plain_copy(cls: type[Any]) -> type[Any]:
    """The same dataclass with the ``__init__`` that ``dataclasses`` writes."""
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": cls.__module__}
    for field in dataclasses.fields(cls):
        namespace["__annotations__"][field.name] = field.type
        namespace[field.name] = dataclasses.field(
            default=field.default, default_factory=field.default_factory
        )
    if hasattr(cls, "__post_init__"):
        namespace["__post_init__"] = cls.__post_init__
    plain = type(cls.__name__, (), namespace)
    return dataclasses.dataclass(frozen=True, kw_only=True, slots=True)(plain)


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.__name__)
def test_the_signature_is_the_dataclass_one(cls: type[Any]) -> None:
    fast = inspect.signature(cls).parameters
    plain = inspect.signature(plain_copy(cls)).parameters
    assert [(p.name, p.kind, repr(p.default)) for p in fast.values()] == [
        (p.name, p.kind, repr(p.default)) for p in plain.values()
    ]


def test_defaults_factories_and_post_init_apply() -> None:
    turn = ModelTurn(text="hi")
    assert turn.usage == Usage() and turn.usage is not ModelTurn().usage  # a factory, each time
    assert turn.tool_calls == () and turn.finish_reason == "stop"
    call = ToolCall(id="a", name="add", arguments={"x": 1})  # type: ignore[arg-type]
    assert call.arguments == '{"x": 1}'  # __post_init__ made the dict its JSON text
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'role'"):
        Message()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        Usage(1)  # type: ignore[misc]


def test_the_values_stay_frozen_comparable_and_picklable() -> None:
    message = Message(role="tool", content="3", tool_call_id="a", name="add")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "4"  # type: ignore[misc]
    assert message == Message(role="tool", content="3", tool_call_id="a", name="add")
    assert dataclasses.replace(message, content="4").content == "4"
    assert pickle.loads(pickle.dumps(message)) == message
    assert hash(Usage(input_tokens=2)) == hash(Usage(input_tokens=2))


def test_only_slotted_keyword_only_dataclasses_are_taken() -> None:
    @dataclasses.dataclass(frozen=True)
    class Positional:
        x: int

    with pytest.raises(TypeError, match="slotted, keyword-only"):
        fast_init(Positional)

    @fast_init
    @dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
    class Point:
        x: int
        y: list[int] = dataclasses.field(default_factory=list)

    assert Point(x=1) == Point(x=1, y=[]) and Point(x=1).y is not Point(x=1).y
