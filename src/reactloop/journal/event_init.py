"""How an event made in code keeps its fields: as given, in the order given.

The loop makes about five events a step (``journal/emitter.py``), each only to be written. An
event class's ``__init__`` is ``types.SimpleNamespace``'s, in C: the keywords given become the
event's instance dict as they are, with no Python frame run (a class's own ``__init__``, called
with keywords, cost more than the rest of the event's emit). What a generated ``__init__``
did at each construction is done where the event is sent, once its fields are looked at:

- ``LINE``, the names of the class's own fields that every line writes (all but the
  ``OPTIONAL`` ones), in the line's order: an event given exactly those, in that order (as the
  loop makes the five of each step), *is* its line's fields, and the emitter sends its dict;
- any other (an ``OPTIONAL`` field given, one left to its default, another order, ``step``
  given, an enum field) is put in its line's order by ``JournalEvent.data()``, which also
  refuses a field the class has not and a required one missing (``TypeError``), where the
  dataclass's ``__init__`` refused them;
- a field left out reads as its default, the class's attribute; one whose default is made by
  a factory, as a ``Made`` (a new value, kept in the event the first time it is read).

From Python 3.13 ``SimpleNamespace`` also takes the fields as one mapping, positionally; they
are then checked when sent, as keywords are (mypy refuses the call either way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

BASE = ("step", "t", "extra", "written")  # every event's; ``extra`` and ``written`` not a line's


class Made:
    """A field's default made by its factory, in place of the class attribute a field with a
    plain default has."""

    __slots__ = ("factory", "name")

    def __init__(self, name: str, factory: Callable[[], Any]) -> None:
        self.name = name
        self.factory = factory

    def __get__(self, event: object, owner: type | None = None) -> Any:
        if event is None:
            return self
        value = event.__dict__[self.name] = self.factory()  # as the dataclass kept it
        return value


def keep_given(cls: type[Any]) -> None:
    """Set ``cls``'s ``FIELDS`` (its own fields, in its line's order), ``REQUIRED``, ``LINE``
    and its ``Made`` defaults (``cls`` a frozen, keyword-only dataclass without an
    ``__init__`` of its own)."""
    fields = [field for field in dataclasses.fields(cls) if field.name not in BASE]
    optional: frozenset[str] = cls.OPTIONAL
    for field in fields:
        if field.default_factory is not dataclasses.MISSING:
            setattr(cls, field.name, Made(field.name, field.default_factory))
    names = tuple(field.name for field in fields)
    line = [name for name in names if name not in optional]  # a list: ``[*own] == LINE``
    required = [field.name for field in fields if _required(field)]
    cls.FIELDS = names
    cls.REQUIRED = frozenset(required)
    cls.LINE = None if cls.ENUMS else line


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
