"""``Agent``: a model, its tools and its limits; ``run(task)`` drives one loop to a stop.

One ``Agent`` serves many runs; each run has its own history, budget and loop guard
(``reactloop.loop.RunLoop``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from reactloop.events import Observer
from reactloop.limits import Limits, Pricer
from reactloop.messages import ToolCall
from reactloop.models.base import Model
from reactloop.models.react_text import ReactTextModel
from reactloop.notices import DEFAULT_INSTRUCTIONS
from reactloop.result import RunResult
from reactloop.tools.base import Tool
from reactloop.tools.toolbox import Toolbox

ProtocolName = Literal["auto", "native", "text"]
Approver = Callable[[ToolCall, Tool], "bool | str"]


class Agent:
    """``Agent(model, tools).run(task) -> RunResult``; never raises for what a model or tool does.

    ``instructions`` become the system message; None means the protocol's default (a short
    note for native calling, nothing beyond the format prompt for text ReAct).
    ``protocol``: ``"native"`` sends tool schemas and reads structured calls, ``"text"`` wraps
    the model in text ReAct (``Thought:`` / ``Action: tool[arg]`` / ``Finish[answer]``),
    ``"auto"`` picks native when the model supports it. ``approve(call, tool)`` is asked before
    every call to a tool with side effects; ``False`` or a reason string declines it.
    """

    def __init__(
        self,
        model: Model,
        tools: Toolbox | Iterable[Tool] = (),
        *,
        limits: Limits | None = None,
        journal: Observer | None = None,
        observers: Sequence[Observer] = (),
        instructions: str | None = None,
        protocol: ProtocolName = "auto",
        tool_choice: str = "auto",
        approve: Approver | None = None,
        config: dict[str, Any] | None = None,
        on_text: Callable[[str], None] | None = None,
        price: Pricer | None = None,
    ) -> None:
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self.protocol = _pick_protocol(model, protocol)
        self.model: Model = ReactTextModel(model) if self.protocol == "text" else model
        self.limits = limits or Limits()
        if self.limits.max_cost is not None and price is None:
            raise ValueError("Limits.max_cost needs the model's price: Agent(..., price=...)")
        self.price = price
        self.observers = tuple(o for o in (journal, *observers) if o is not None)
        if instructions is None and self.protocol == "native":
            instructions = DEFAULT_INSTRUCTIONS
        self.instructions = instructions
        self.tool_choice = tool_choice
        self.approve = approve
        self.config = dict(config or {})
        self.on_text = on_text
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the running ``run`` to stop at the next step boundary (thread-safe)."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def run(self, task: str) -> RunResult:
        self._cancel.clear()
        from reactloop.loop import RunLoop

        return RunLoop(self, task).execute()


def _pick_protocol(model: Model, protocol: ProtocolName) -> Literal["native", "text"]:
    if protocol == "auto":
        return "native" if getattr(model, "native_tools", False) else "text"
    if protocol not in ("native", "text"):
        raise ValueError(f"protocol must be auto, native or text, not {protocol!r}")
    return protocol
