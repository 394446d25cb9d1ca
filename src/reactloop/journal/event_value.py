"""``JournalEvent``: what every typed event is (``schema.py`` has one subclass per type).

Its ``step`` and ``t``; its line (``to_dict``), exactly as the writer writes it; and how a
line is read back (``from_dict``), each field checked once by ``field_checks.py``. The loop
makes about five events a step (``journal/emitter.py``): an event keeps the fields it is given
as they are, in C (``event_init.py``), and ``data()`` puts them in its line's order (the
emitter sends an event given its line's fields in that order as it is). ``event_class`` makes
an event type (no ``from __future__ import annotations``: ``schema.py`` says why).
"""

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar, dataclass_transform

from reactloop.journal.event_init import BASE, keep_given
from reactloop.journal.field_checks import short, spec

if TYPE_CHECKING:  # typeshed gives SimpleNamespace's attributes as Any: the fields' types here
    _Given = object
else:
    from types import SimpleNamespace as _Given  # its __init__ keeps the keywords given


class _NoExtra(Mapping[str, Any]):
    """The ``extra`` of an event made in code: empty, one for all (so made by no factory)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __hash__(self) -> int:
        return 0


NO_EXTRA: Mapping[str, Any] = _NoExtra()


@dataclass(frozen=True, kw_only=True)
class JournalEvent(_Given):
    """What every event has: its ``step`` and ``t`` (seconds since the journal opened)."""

    TYPE: ClassVar[str] = ""
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()  # written only when not None
    ENUMS: ClassVar[tuple[str, ...]] = ()  # its fields that may hold an enum: sent as text
    FIELDS: ClassVar[tuple[str, ...]] = ()  # its own, in its line's order (``keep_given``)
    REQUIRED: ClassVar[frozenset[str]] = frozenset()
    LINE: ClassVar[list[str] | None] = None  # given exactly these: its line's fields
    step: int = 0
    t: float | None = None
    extra: Mapping[str, Any] = field(default=NO_EXTRA, compare=False, repr=False)
    written: frozenset[str] | None = field(default=None, compare=False, repr=False)

    @property
    def type(self) -> str:
        return self.TYPE

    def to_dict(self) -> dict[str, Any]:
        """The event's journal line (``type``, ``step``, ``t``, then its own fields)."""
        if self.written is None:
            head: dict[str, Any] = {"type": self.type, "step": self.step}
            if self.t is not None:
                head["t"] = self.t
            head.update(self.data())
            return head
        data: dict[str, Any] = {"type": self.type}  # read, or made to write these fields
        written = self.written
        for name in spec(type(self)):
            if name in written:
                data[name] = _plain(getattr(self, name))
        data.update(self.extra)
        return data

    def given(self, name: str) -> Any:
        """The field ``name`` as the event's line gave it; None when its line had no such
        field (a journal written before it existed), where the attribute has its default.
        An event made in code gives every field."""
        if self.written is not None and name not in self.written:
            return None
        return getattr(self, name)

    def data(self) -> dict[str, Any]:
        """The event's own fields (its line without ``type``, ``step`` and ``t``): what the
        run's observers get (``Event.data``). A new dict."""
        if self.written is None:  # made in code: every field but the OPTIONAL ones left None
            return self._made_line()
        line = self.to_dict()
        for key in ("type", "step", "t"):
            line.pop(key, None)
        return line

    def _made_line(self) -> dict[str, Any]:
        """``data()`` of an event made in code, from the fields it was given (``keep_given``);
        a field its class has not, or a required one missing, is a ``TypeError``."""
        given = self.__dict__
        cls = type(self)
        unknown = [name for name in given if name not in cls.FIELDS and name not in BASE]
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}")
        line: dict[str, Any] = {}
        for name in cls.FIELDS:
            if name not in given and name in cls.REQUIRED:
                raise TypeError(f"{cls.__name__} made without its {name!r}")
            value = getattr(self, name)
            if value is not None or name not in self.OPTIONAL:
                line[name] = _plain(value)
        line.update(self.extra)
        return line

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The event of a journal line; ``ValueError`` names the field that is wrong."""
        return cls._read(data, salvage=False)

    @classmethod
    def salvaged(cls, data: Mapping[str, Any]) -> Self:
        """The event of a damaged line, as the readers that count and show read it: a field
        that is not of its kind reads as absent (``given`` is None, the attribute its
        default; its value is kept in ``extra``, so the line reads back as it was). A
        required field missing or wrong is still a ``ValueError``."""
        return cls._read(data, salvage=True)

    @classmethod
    def _read(cls, data: Mapping[str, Any], *, salvage: bool) -> Self:
        values: dict[str, Any] = {}
        known = spec(cls)
        extra: dict[str, Any] = {}
        for name, (required, check, what) in known.items():
            if name not in data:
                if required:
                    raise ValueError(f"a {cls.TYPE} event without its {name!r}")
                continue
            value = data[name]
            if check(value):
                values[name] = value
            elif salvage and not required:
                extra[name] = value
            else:
                raise ValueError(f"{cls.TYPE}'s {name!r} is not {what}: {short(value)}")
        extra.update((k, v) for k, v in data.items() if k not in known and k != "type")
        return cls._build(values, extra, frozenset(values))

    @classmethod
    def _build(cls, values: dict[str, Any], extra: dict[str, Any], written: frozenset[str]) -> Self:
        return cls(**values, extra=extra, written=written)


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


del JournalEvent.__init__  # made for the type checker: SimpleNamespace's keeps what is given
E = TypeVar("E", bound=JournalEvent)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
def event_class(cls: type[E]) -> type[E]:
    """An event type (``schema.py``): a frozen, keyword-only dataclass that keeps the fields
    it is given (``event_init.py``). The dataclass's own ``__init__`` is not made (it would
    stand in for ``SimpleNamespace``'s, and was a third of the event types' import time), nor
    its ``__doc__``."""
    if cls.__doc__ is None:  # else the dataclass writes its signature (``inspect``: slow)
        cls.__doc__ = f"The journal's ``{cls.TYPE}`` event."
    made = dataclass(frozen=True, kw_only=True, init=False)(cls)
    keep_given(made)
    return made
