"""One model call of a run: the request, the adapter's answer, and everything that can go wrong.

``ask`` never raises for what a model does: a ``ModelError``, an adapter's bug and a reply
that is not a ``ModelTurn`` all come back as a ``ModelFailure`` (the run then stops with
``model_error``, or ``timeout`` when the run's time ran out).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from reactloop.errors import ERROR_KINDS, ModelError, describe_exception
from reactloop.history import History
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.events import micros
from reactloop.journal.schema import ResponseEvent, WarningEvent
from reactloop.journal.warning_kinds import WarningKind
from reactloop.loop.budget import Budget
from reactloop.loop.runtime.custody import Custody
from reactloop.loop.runtime.custody import current as current_custody
from reactloop.loop.settings import RunSettings
from reactloop.messages import MAX_TOKEN_COUNT, ModelTurn, ToolCall, Usage, exact_count
from reactloop.models.base import ModelRequest
from reactloop.support.interrupts import interruptibly

Emit = Callable[[JournalEvent], None]  # ``Emitter.emit``
Warn = Callable[[WarningKind | str, str], None]  # (kind, message): ``Emitter.warn_once``


class ModelFailure(NamedTuple):  # a tuple: cheaper to define than a dataclass (import time)
    """A model call that gave no usable turn; ``message`` says why, ``kind`` is one of
    ``errors.ERROR_KINDS``."""

    message: str
    kind: str = "other"


class Asked(NamedTuple):  # a tuple: made on every step, so made cheaply
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
    warn: Warn,
) -> Asked:
    """Ask ``settings.model`` for the next turn; ``emit`` is None when nobody observes.

    The turn's ``notices`` go to ``warn`` (the run's ``Emitter.warn_once``: each kind once per
    run, in the run's warnings and the journal).
    """
    wire: list[Any] = []
    specs, output = settings.toolbox.specs, settings.output
    custody = None if budget.limits.max_seconds is None else current_custody()
    on_text = settings.on_text
    if custody is not None and on_text is not None:
        on_text = custody.guarded(on_text)  # a reply left behind prints no more
    request = ModelRequest(
        messages=history,
        tools=specs if output is None else output.specs_with(specs),
        tool_choice=tool_choice,
        timeout=budget.seconds_left,
        step=step,
        on_text=on_text,
        on_raw=None if emit is None else wire.append,  # nobody observes: nothing to render
        answer_schema=None if output is None else output.reply_schema,
        deferred=settings.toolbox.deferred,
    )
    started = time.perf_counter()
    try:
        reply: Any = _complete(settings.model, request, custody)  # Ctrl-C stops it
    except ModelError as exc:
        failure = ModelFailure(_message(exc), _error_kind(exc))
        return _failed(budget, emit, failure, wire, started)
    except Exception as exc:  # an adapter bug must not crash the harness
        if emit is not None:
            import traceback  # only for an adapter's bug, observed

            emit(WarningEvent(kind=WarningKind.INTERNAL_ERROR, message=traceback.format_exc()))
        failure = ModelFailure(describe_exception(exc), "internal")
        return _failed(budget, None, failure, wire, started)
    seconds = time.perf_counter() - started
    turn = checked_turn(reply)
    if isinstance(turn, ModelFailure):
        return _failed(budget, emit, turn, wire, started)
    turn = _sound_usage(turn, warn)
    if emit is not None and (turn.raw is not None or wire):
        emit(ResponseEvent(raw=turn.raw, request=wire[-1] if wire else None))
    if turn.notices:
        _pass_on(turn.notices, warn)
    budget.record_model_call(turn.usage)  # after its events: counted with its turn's
    return Asked(turn, seconds)


def _complete(model: Any, request: ModelRequest, custody: Custody | None) -> Any:
    """``model.complete(request)``, a region the run's waiting thread can take the run from
    (``loop/runtime/custody.py``), when the run has one."""
    if custody is None:
        return interruptibly(model.complete, request)
    custody.enter_waiting("the model call")
    try:
        return interruptibly(model.complete, request)
    finally:
        custody.leave()


def _sound_usage(turn: ModelTurn, warn: Warn) -> ModelTurn:
    """``turn`` with each count of its usage that replay would refuse (``exact_count``: not
    a whole number, negative, beyond ``MAX_TOKEN_COUNT``) counted as 0, with a warning."""
    usage = turn.usage
    counts = usage.to_dict()
    bad = {key: value for key, value in counts.items() if exact_count(value) is None}
    if not bad:
        return turn
    shown = ", ".join(f"{key}={_shown_count(value)}" for key, value in bad.items())
    warn(
        WarningKind.BAD_USAGE,
        f"the model reported a usage that is not a token count ({shown}; a count is a whole "
        f"number from 0 to {MAX_TOKEN_COUNT:,}): counted as 0",
    )
    fixed = {key: exact_count(value) or 0 for key, value in counts.items()}
    return dataclasses.replace(turn, usage=Usage(**fixed))


def _shown_count(value: object) -> str:
    try:
        return repr(value)[:40]
    except Exception:  # a hostile __repr__
        return f"a {type(value).__name__}"


def _pass_on(notices: object, warn: Warn) -> None:
    """An adapter's ``(kind, message)`` notices to ``warn``; values of other shapes are ignored."""
    for notice in notices if isinstance(notices, tuple | list) else ():
        if isinstance(notice, tuple) and len(notice) == 2:
            kind, message = notice
            if isinstance(kind, str) and isinstance(message, str):
                warn(kind, message)


def _error_kind(exc: ModelError) -> str:
    """The error's ``kind``, when it is one of ``errors.ERROR_KINDS``; else ``other``."""
    found = getattr(exc, "kind", None)
    return found if isinstance(found, str) and found in ERROR_KINDS else "other"


def _message(exc: ModelError) -> str:
    try:
        return str(exc)
    except Exception:  # a hostile __str__
        return describe_exception(exc)


def _failed(
    budget: Budget, emit: Emit | None, failure: ModelFailure, wire: list[Any], started: float
) -> Asked:
    budget.record_model_call_failed()
    seconds = time.perf_counter() - started
    if emit is not None:
        request = wire[-1] if wire else None  # the request as sent, and why no turn came back
        emit(WarningEvent.model_error(failure.message, failure.kind, request, micros(seconds)))
    if not failure.message:
        failure = ModelFailure("the model call failed", failure.kind)
    return Asked(failure, seconds)


_FIELD_TYPES = (str, tuple, Usage, str)  # of text, tool_calls, usage, finish_reason


def checked_turn(reply: object) -> ModelTurn | ModelFailure:
    """``reply`` if it is a well-formed ``ModelTurn`` (a list of calls becomes a tuple)."""
    if type(reply) is ModelTurn:  # the common case, in one expression: this is every step's
        calls = reply.tool_calls
        if (
            (type(reply.text), type(calls), type(reply.usage), type(reply.finish_reason))
            == _FIELD_TYPES
            and reply.format_error is None
            and (reply.reasoning is None or type(reply.reasoning) is str)
            and (reply.final_answer is None or type(reply.final_answer) is str)
            and (not calls or type(calls[0]) is ToolCall)
            and (len(calls) < 2 or all(type(call) is ToolCall for call in calls))
        ):
            return reply
    return _checked_slowly(reply)


def _checked_slowly(reply: object) -> ModelTurn | ModelFailure:
    if not isinstance(reply, ModelTurn):
        return _bad_reply(f"the model returned {type(reply).__name__}, not a ModelTurn")
    calls: Any = reply.tool_calls
    if not isinstance(calls, tuple | list) or not all(type(c) is ToolCall for c in calls):
        return _bad_reply("the model's turn has tool_calls that are not ToolCall values")
    for name in ("reasoning", "final_answer", "format_error"):
        value = getattr(reply, name)
        if value is not None and not isinstance(value, str):
            return _bad_reply(f"the model's turn has a {name} that is not a string")
    if not isinstance(reply.text, str) or not isinstance(reply.finish_reason, str):
        return _bad_reply("the model's turn has a text or finish_reason that is not a string")
    if not isinstance(reply.usage, Usage):
        return _bad_reply("the model's turn has a usage that is not a Usage")
    if isinstance(calls, list):
        return dataclasses.replace(reply, tool_calls=tuple(calls))
    return reply


def _bad_reply(message: str) -> ModelFailure:
    return ModelFailure(message, "bad_reply")
