"""``line_init``: the ``__init__`` of an event class, which keeps the event's line as it goes.

The loop makes about five events a step (``journal/emitter.py``), each only to be written:
so the ``__init__`` made here stores an event's own fields straight into its instance dict,
in its line's order, an ``OPTIONAL`` field only when it is not None (the class's default
stands in for it); ``JournalEvent.data()`` is then a copy of that dict, and the emitter sends
the dict itself (the event is made only to be sent).
``step``, ``t``, ``extra`` and ``written`` are stored after them only when one is given (an
event read from a journal, or made with its step); otherwise the class's defaults answer.
It has the dataclass's signature, defaults and default factories; the value stays frozen.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from reactloop.support.fast_init import init_parameter

BASE = ("step", "t", "extra", "written")  # every event's; ``extra`` and ``written`` not a line's


def line_init(cls: type, no_extra: object) -> None:
    """Give the event class ``cls`` (a frozen, keyword-only dataclass, not slotted) the
    ``__init__`` that keeps its line."""
    namespace: dict[str, Any] = {"_NO_EXTRA": no_extra}
    body: list[str] = []
    fields = dataclasses.fields(cls)
    params = [init_parameter(field, namespace, body) for field in fields]
    body += _own_fields(cls, [field.name for field in fields])
    body.append("if step or t is not None or extra is not _NO_EXTRA or written is not None:")
    body.append("    own.update(step=step, t=t, extra=extra, written=written)")
    lines = "".join(f"    {line}\n" for line in body)
    exec(f"def __init__(self, *, {', '.join(params)}) -> None:\n{lines}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010  (mypy refuses an assignment to a method)


def _own_fields(cls: type, names: list[str]) -> list[str]:
    """The lines that put the event's own fields (of ``names``, its fields in its line's
    order) in ``own``."""
    optional: frozenset[str] = getattr(cls, "OPTIONAL", frozenset())
    lines = ["own = self.__dict__"]  # stored one by one: cheaper than a dict assigned
    for name in names:
        if name in BASE:
            continue
        if name in optional:
            lines.append(f"if {name} is not None: own[{name!r}] = {name}")
        else:
            lines.append(f"own[{name!r}] = {name}")
    return lines
