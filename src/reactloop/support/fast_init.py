"""``fast_init``: a faster ``__init__`` for the frozen, slotted dataclasses made every step.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which looks
the name up on the class every time; the loop makes a few such values a step (the assistant
and tool messages, each call's result), and that lookup was a third of their cost. The
``__init__`` made here has the same signature, defaults, default factories and
``__post_init__`` call, and sets each slot through the slot's own descriptor. The value stays
frozen: assigning to a field still raises ``FrozenInstanceError``.

    @fast_init
    @dataclass(frozen=True, kw_only=True, slots=True)
    class Point:
        x: int
        y: int = 0
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


class _Factory:
    """The default of a field with a default factory (call the factory), shown as
    ``dataclasses`` shows it in a signature."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted, keyword-only dataclass ``cls`` the faster ``__init__``."""
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not params:
        return cls
    slots = getattr(cls, "__slots__", ())
    if not all(field.init and field.kw_only and field.name in slots for field in params):
        raise TypeError(f"{cls.__name__}: fast_init needs slotted, keyword-only init fields")
    namespace: dict[str, Any] = {}
    signature: list[str] = []
    body: list[str] = []
    for field in params:
        name = field.name
        namespace[f"_set_{name}"] = vars(cls)[name].__set__
        signature.append(init_parameter(field, namespace, body))
        body.append(f"_set_{name}(self, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    lines = "".join(f"    {line}\n" for line in body or ["pass"])
    exec(f"def __init__(self, *, {', '.join(signature)}) -> None:\n{lines}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010  (mypy refuses an assignment to a method)
    return cls


def init_parameter(
    field: dataclasses.Field[Any], namespace: dict[str, Any], body: list[str]
) -> str:
    """The parameter of a generated ``__init__`` for ``field``, as the dataclass's own has it:
    its default or default factory put in ``namespace`` (with ``_FACTORY``, the factory's
    stand-in), and the factory's call added to ``body``."""
    name = field.name
    if field.default is not dataclasses.MISSING:
        namespace[f"_default_{name}"] = field.default
        return f"{name}=_default_{name}"
    if field.default_factory is not dataclasses.MISSING:
        namespace["_FACTORY"] = _FACTORY
        namespace[f"_factory_{name}"] = field.default_factory
        body.append(f"if {name} is _FACTORY: {name} = _factory_{name}()")
        return f"{name}=_FACTORY"
    return name
