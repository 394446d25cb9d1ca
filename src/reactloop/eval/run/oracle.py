"""A deterministic model that solves ``arithmetic`` tasks, for tests, demos and the benchmark.

It reads the items from the task ("17 notebooks at 23 each and 4 pens at 115 each"), calls
the calculator once per item and once for the sum, then answers; on the episodes listed in
``fail_on`` (task id, repeat) it answers one more than the total. It speaks both protocols:
native tool calls when the request carries tool specs, text ReAct otherwise. Use it as a rung's
``factory``: ``Rung(label="oracle", spec="oracle", factory=OracleFactory())``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reactloop import FunctionModel, Model, ModelRequest, ModelTurn, ToolCall

if TYPE_CHECKING:
    from reactloop.eval.run.spec import EpisodeSpec

_ITEM = re.compile(r"(\d+) [a-z]+ at (\d+) each")


def plan(task: str) -> list[str]:
    """The calculator expressions that solve ``task``, in order (the last one is the sum)."""
    items = _ITEM.findall(task)
    products = [f"{n} * {price}" for n, price in items]
    return [*products, " + ".join(f"({p})" for p in products)]


def total(task: str) -> int:
    return sum(int(n) * int(price) for n, price in _ITEM.findall(task))


@dataclass(frozen=True)
class OracleFactory:
    """Builds one oracle model per episode; ``fail_on`` holds (task id, repeat) pairs."""

    fail_on: frozenset[tuple[str, int]] = field(default_factory=frozenset)

    def __call__(self, episode: EpisodeSpec) -> Model:
        wrong = (episode.task.id, episode.repeat) in self.fail_on
        return FunctionModel(lambda request: _reply(request, wrong), name="oracle")


def _reply(request: ModelRequest, wrong: bool) -> ModelTurn:
    task = next(m.content or "" for m in request.messages if m.role == "user")
    steps = plan(task)
    done = sum(1 for m in request.messages if m.role == "assistant")
    native = bool(request.tools)
    if done < len(steps):
        expression = steps[done]
        if native:
            arguments = json.dumps({"expression": expression})
            call = ToolCall(id=f"call_{done}", name="calculator", arguments=arguments)
            return ModelTurn(tool_calls=(call,), finish_reason="tool_calls")
        return ModelTurn(text=f"Thought: step {done + 1}.\nAction: calculator[{expression}]")
    answer = str(total(task) + (1 if wrong else 0))
    if native:
        return ModelTurn(text=f"The total is {answer}.")
    return ModelTurn(text=f"Thought: done.\nAction: Finish[The total is {answer}.]")
