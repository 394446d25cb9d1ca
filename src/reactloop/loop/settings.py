"""``RunSettings``: what one run needs from its agent, as a plain frozen value.

``Agent`` builds it; ``RunLoop`` reads it and never sees the ``Agent`` (so neither module
imports the other's class, and a run cannot change the agent it came from).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reactloop.journal.events import Observer
from reactloop.journal.run_counts import Pricer
from reactloop.limits import Limits
from reactloop.loop.completion_checks import Verify
from reactloop.loop.tree_budget import TreePlace
from reactloop.models.base import Model
from reactloop.output.spec import OutputSpec
from reactloop.support.cancel_event import CancelEvent
from reactloop.tools.prepared import Approver
from reactloop.tools.toolbox import Toolbox


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """``journal`` is the observer that must see every event (a failure ends the run with
    ``journal_error``); ``observers`` are the others (one that fails is dropped with a
    warning). ``cancel`` is set to ask the run to stop. ``output`` makes the answer a typed
    value (``reactloop.output.spec``). ``tree`` is a sub-agent's place in its tree (None: a
    root run; ``tree_budget.py``)."""

    model: Model
    toolbox: Toolbox
    protocol: Literal["native", "text"]
    limits: Limits
    instructions: str | None = None
    tool_choice: str = "auto"
    journal: Observer | None = None
    observers: tuple[Observer, ...] = ()
    approve: Approver | None = None
    price: Pricer | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    on_text: Callable[[str], None] | None = None
    cancel: threading.Event = field(default_factory=CancelEvent)
    output: OutputSpec | None = None
    verify: Verify | None = None
    checklist: tuple[str, ...] = ()
    tree: TreePlace | None = None
