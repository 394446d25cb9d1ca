"""Text ReAct as an adapter: any chat model becomes a tool-calling model.

The adapter renders the tools into the system prompt, sends the stop sequence
``Observation:``, cuts whatever the model wrote from ``Observation:`` on, and parses
``Action: tool[argument]`` / ``Finish[answer]`` into a ``ModelTurn``. Tool results go back as
``Observation: …`` lines. Rendering is incremental: the history only grows, so each call
renders only the messages added since the previous one.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from collections.abc import Sequence
from typing import Any

from reactloop.messages import Message, ModelTurn, ToolCall, ToolSpec, own_call_id
from reactloop.models.base import Model, ModelRequest, ReactFormat
from reactloop.models.copy_guard import refuse_copied_answer, shown_strings
from reactloop.models.react.parse import STOP, Action, FormatProblem, cut_observation, parse_reply
from reactloop.models.react.prompt import render_observation, system_prompt
from reactloop.support import json_decode


class ReactTextModel:
    """Wraps ``inner`` (a chat model) in the text ReAct protocol.

    ``worked_example`` adds short worked examples to the system prompt; when None, the inner
    model's ``prefers_worked_example`` attribute decides (small local models set it). With
    them, an answer copied from them (or from the format line) that the run does not ground is
    refused as a format error (``copy_guard.py``), judged on the run's own history.
    """

    native_tools = True

    def __init__(self, inner: Model, *, worked_example: bool | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        if worked_example is None:
            worked_example = bool(getattr(inner, "prefers_worked_example", False))
        self.worked_example = worked_example
        self._caches: weakref.WeakKeyDictionary[Any, _RenderCache] = weakref.WeakKeyDictionary()

    def system_prompt(self, tools: Sequence[ToolSpec], instructions: str | None = None) -> str:
        return system_prompt(tools, instructions, worked_example=self.worked_example)

    def complete(self, request: ModelRequest) -> ModelTurn:
        messages = self._render(request)
        react = ReactFormat(
            tools=tuple((spec.name, tuple(_parameter_names(spec))) for spec in request.tools),
            finish_only=request.tool_choice == "none",
        )
        inner_request = dataclasses.replace(
            request,
            messages=messages,
            tools=(),
            tool_choice="none",
            stop=(STOP,),
            react=react,
        )
        reply = self.inner.complete(inner_request)
        turn = to_turn(reply, request.tools, request.step)
        if not self.worked_example:
            return turn
        strings = shown_strings(request.tools, worked_example=True)
        return refuse_copied_answer(turn, request.messages, strings)

    def _render(self, request: ModelRequest) -> list[Message]:
        history = request.messages
        try:
            cache = self._caches.setdefault(history, _RenderCache())
        except TypeError:  # not weak-referenceable: render from scratch
            cache = _RenderCache()
        revision = getattr(history, "revision", 0)
        if len(history) < cache.count or revision != cache.revision:
            cache.rendered, cache.count, cache.revision = [], 0, revision
        if not cache.rendered and (not history or history[0].role != "system"):
            prompt = self.system_prompt(request.tools)
            cache.rendered.append(Message(role="system", content=prompt))
        for message in history[cache.count :]:
            _append(cache.rendered, self._render_one(message, request.tools))
        cache.count = len(history)
        return cache.rendered

    def _render_one(self, message: Message, tools: Sequence[ToolSpec]) -> Message:
        if message.role == "system":
            return Message(role="system", content=self.system_prompt(tools, message.content))
        if message.role == "tool":
            return Message(role="user", content=render_observation(message.content))
        if message.role == "user" and message.kind == "format_error":
            return Message(role="user", content=f"{STOP} {message.content}")
        return Message(role=message.role, content=message.content)


class _RenderCache:
    """What was rendered for one history: the history only grows, so only new messages render."""

    def __init__(self) -> None:
        self.rendered: list[Message] = []
        self.count = 0
        self.revision = 0


def _append(rendered: list[Message], message: Message) -> None:
    last = rendered[-1] if rendered else None
    if last is not None and last.role == message.role == "user":
        rendered[-1] = Message(role="user", content=f"{last.content}\n{message.content}")
    else:
        rendered.append(message)


def to_turn(reply: ModelTurn, tools: Sequence[ToolSpec], step: int) -> ModelTurn:
    """Parse the inner model's reply into a turn with at most one tool call or an answer."""
    text, cut = cut_observation(reply.text)
    raw: Any = {"text": reply.text, "raw": reply.raw} if cut else reply.raw
    base = dataclasses.replace(reply, text=text, raw=raw, tool_calls=())
    if reply.finish_reason == "length":
        return base
    parsed = parse_reply(text)
    if isinstance(parsed, FormatProblem):
        return dataclasses.replace(base, format_error=parsed.message, finish_reason="stop")
    if parsed.is_finish:
        return dataclasses.replace(base, final_answer=parsed.argument, finish_reason="stop")
    call = ToolCall(
        id=own_call_id(step),
        name=parsed.name,
        arguments=_arguments_json(parsed, tools),
    )
    return dataclasses.replace(base, tool_calls=(call,), finish_reason="tool_calls")


def _arguments_json(action: Action, tools: Sequence[ToolSpec]) -> str:
    spec = next((s for s in tools if s.name == action.name), None)
    names = _parameter_names(spec) if spec else []
    argument = action.argument
    as_object = _json_object(argument)
    if as_object is not None and (len(names) != 1 or set(as_object) <= set(names)):
        return json.dumps(as_object, ensure_ascii=False)
    if len(names) == 1:
        return json.dumps({names[0]: argument}, ensure_ascii=False)
    required = list((spec.parameters.get("required") if spec else None) or [])
    if len(required) == 1:
        return json.dumps({required[0]: argument}, ensure_ascii=False)
    if spec is not None and not names:
        return "{}"
    return argument


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json_decode.safe_loads(text)
    except json_decode.JSONRefused:
        return None
    return value if isinstance(value, dict) else None


def _parameter_names(spec: ToolSpec) -> list[str]:
    return list((spec.parameters.get("properties") or {}).keys())
