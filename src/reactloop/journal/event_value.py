"""``JournalEvent``: what every typed event is (``schema.py`` has one subclass per type).

Its ``step`` and ``t``; its line (``to_dict``), exactly as the writer writes it; and how a
line is read back (``from_dict``), each field checked once by ``field_checks.py``. The loop
makes about five events a step (``journal/emitter.py``): they are slotted, with
``fast_init``'s ``__init__``, and the fields of one made in code are read by a function
compiled once for its class (``_writer``), not by a loop over its fields.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from reactloop.journal.field_checks import short, spec

Writer = Callable[[Any], dict[str, Any]]  # an event made in code -> its own fields
_WRITERS: dict[type, Writer] = {}


@dataclass(frozen=True, kw_only=True, slots=True)
class JournalEvent:
    """What every event has: its ``step`` and ``t`` (seconds since the journal opened)."""

    TYPE: ClassVar[str] = ""
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()  # written only when not None
    step: int = 0
    t: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
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
        run's observers get (``Event.data``)."""
        if self.written is None:  # made in code: every field but the OPTIONAL ones left None
            own = (_WRITERS.get(type(self)) or _writer(type(self)))(self)
            if self.extra:
                own.update(self.extra)
            return own
        line = self.to_dict()
        for key in ("type", "step", "t"):
            line.pop(key, None)
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


def _writer(cls: type[JournalEvent]) -> Writer:
    """The function that reads the own fields of an event of ``cls`` made in code, in its
    line's order: each field once, an ``OPTIONAL`` one only when it is not None, an enum as
    its value. Compiled once for the class (as ``dataclasses`` compiles an ``__init__``)."""
    hints = typing.get_type_hints(cls)
    literal, rest = [], []
    for name in spec(cls):
        if name in ("step", "t"):
            continue
        value = f"_plain(self.{name})" if _holds_enum(hints[name]) else f"self.{name}"
        if name in cls.OPTIONAL:
            rest += [f"value = {value}", f"if value is not None: own[{name!r}] = value"]
        elif rest:
            rest.append(f"own[{name!r}] = {value}")
        else:
            literal.append(f"{name!r}: {value}")
    lines = [f"own = {{{', '.join(literal)}}}", *rest, "return own"]
    namespace: dict[str, Any] = {"_plain": _plain}
    exec("def own_fields(self):\n" + "".join(f"    {line}\n" for line in lines), namespace)
    writer: Writer = namespace["own_fields"]
    _WRITERS[cls] = writer
    return writer


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _holds_enum(hint: Any) -> bool:
    """Whether a field of type ``hint`` may hold an enum (``WarningEvent.kind``)."""
    kinds = typing.get_args(hint) or (hint,)
    return any(isinstance(kind, type) and issubclass(kind, enum.Enum) for kind in kinds)
