"""One model call of a run: the request, the adapter's answer, and everything that can go wrong.

``ask`` never raises for what a model does: a ``ModelError``, an adapter's bug and a reply
that is not a ``ModelTurn`` all come back as a ``ModelFailure`` (the run then stops with
``model_error``, or ``timeout`` when the run's time ran out).
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reactloop.errors import ModelError, describe_exception
from reactloop.events import micros
from reactloop.history import History
from reactloop.limits import Budget
from reactloop.messages import ModelTurn, ToolCall, Usage
from reactloop.models.base import ModelRequest
from reactloop.settings import RunSettings

Emit = Callable[..., None]


@dataclass(frozen=True, slots=True)
class ModelFailure:
    """A model call that gave no usable turn; ``message`` says why."""

    message: str


@dataclass(frozen=True, slots=True)
class Asked:
    """What ``ask`` got: a turn or a failure, and how long the call took."""

    turn: ModelTurn | ModelFailure
    seconds: float


def ask(
    settings: RunSettings,
    history: History,
    tool_choice: str,
    budget: Budget,
    step: int,
    emit: Emit | None,
) -> Asked:
    """Ask ``settings.model`` for the next turn; ``emit`` is None when nobody observes."""
    wire: list[Any] = []
    specs = settings.toolbox.specs
    request = ModelRequest(
        messages=history,
        tools=specs if settings.output is None else settings.output.specs_with(specs),
        tool_choice=tool_choice,
        timeout=budget.seconds_left,
        step=step,
        on_text=settings.on_text,
        on_raw=wire.append,
    )
    started = time.perf_counter()
    try:
        reply: Any = settings.model.complete(request)
    except ModelError as exc:
        return _failed(budget, emit, _message(exc), wire, started)
    except Exception as exc:  # an adapter bug must not crash the harness
        if emit is not None:
            emit("warning", kind="internal_error", message=traceback.format_exc())
        return _failed(budget, None, describe_exception(exc), wire, started)
    seconds = time.perf_counter() - started
    turn = checked_turn(reply)
    if isinstance(turn, ModelFailure):
        return _failed(budget, emit, turn.message, wire, started)
    budget.record_model_call(turn.usage)
    if emit is not None and (turn.raw is not None or wire):
        emit("response", raw=turn.raw, request=wire[-1] if wire else None)
    return Asked(turn, seconds)


def _message(exc: ModelError) -> str:
    try:
        return str(exc)
    except Exception:  # a hostile __str__
        return describe_exception(exc)


def _failed(
    budget: Budget, emit: Emit | None, message: str, wire: list[Any], started: float
) -> Asked:
    budget.record_model_call_failed()
    seconds = time.perf_counter() - started
    if emit is not None:
        emit(  # the request as sent, and why no turn came back
            "warning",
            kind="model_error",
            message=message,
            request=wire[-1] if wire else None,
            seconds=micros(seconds),
        )
    return Asked(ModelFailure(message or "the model call failed"), seconds)


def checked_turn(reply: object) -> ModelTurn | ModelFailure:
    """``reply`` if it is a well-formed ``ModelTurn`` (a list of calls becomes a tuple)."""
    if (  # the common case, checked in one expression: this is on every step's path
        type(reply) is ModelTurn
        and type(reply.text) is str
        and type(reply.tool_calls) is tuple
        and type(reply.usage) is Usage
        and type(reply.finish_reason) is str
        and reply.reasoning is None
        and reply.format_error is None
        and (reply.final_answer is None or type(reply.final_answer) is str)
        and all(type(call) is ToolCall for call in reply.tool_calls)
    ):
        return reply
    return _checked_slowly(reply)


def _checked_slowly(reply: object) -> ModelTurn | ModelFailure:
    if not isinstance(reply, ModelTurn):
        return ModelFailure(f"the model returned {type(reply).__name__}, not a ModelTurn")
    calls: Any = reply.tool_calls
    if not isinstance(calls, tuple | list) or not all(type(c) is ToolCall for c in calls):
        return ModelFailure("the model's turn has tool_calls that are not ToolCall values")
    for name in ("reasoning", "final_answer", "format_error"):
        value = getattr(reply, name)
        if value is not None and not isinstance(value, str):
            return ModelFailure(f"the model's turn has a {name} that is not a string")
    if not isinstance(reply.text, str) or not isinstance(reply.finish_reason, str):
        return ModelFailure("the model's turn has a text or finish_reason that is not a string")
    if not isinstance(reply.usage, Usage):
        return ModelFailure("the model's turn has a usage that is not a Usage")
    if isinstance(calls, list):
        return dataclasses.replace(reply, tool_calls=tuple(calls))
    return reply
