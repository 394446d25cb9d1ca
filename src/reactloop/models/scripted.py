"""Models that need no server: ``ScriptedModel`` plays turns from a list, ``FunctionModel``
asks a Python function. Both drive the loop deterministically in demos and tests.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import ModelError, UsageError, describe_exception
from reactloop.history import History
from reactloop.messages import ModelTurn, ToolCall, Usage, own_call_id
from reactloop.models.base import ModelRequest
from reactloop.support.json_decode import read_json_file

if TYPE_CHECKING:
    from reactloop.models.base import ModelSettings

ScriptTurn = Mapping[str, Any] | ModelTurn | str


class ScriptedModel:
    """Replays scripted turns in order; running out of turns is a ``ModelError``.

    A turn is a ``ModelTurn``, a string (the reply text), or a dict
    ``{"content": "...", "tool_calls": [{"name": "...", "arguments": {...}}]}`` where both keys
    are optional, ``arguments`` may be a dict or raw text (to script invalid JSON), and
    ``finish_reason`` and ``usage`` may be given too; the entry itself is the turn's ``raw``.
    ``"expects": "TEXT"`` plays the turn only when the last observation contains ``TEXT``
    (a scripted "all tests pass" after ``No module named pytest`` is a ``ModelError`` that
    quotes the observation, not an answer its own observations contradict).
    ``native_tools`` is True when any turn has tool calls; a script of plain text is meant for
    the text ReAct protocol.
    ``requests`` keeps every request, its ``messages`` as they were when it was made (a view
    of the run's history, not a copy: keeping them costs nothing per message). Turn it off
    with ``keep_requests=False`` where nothing reads them.
    """

    def __init__(
        self, turns: Iterable[ScriptTurn], *, name: str = "scripted", keep_requests: bool = True
    ) -> None:
        self.name = name
        self.keep_requests = keep_requests
        self._turns = [to_turn(turn, index) for index, turn in enumerate(turns)]
        self.native_tools = any(turn.tool_calls for turn in self._turns)
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        path = Path(path)
        data = read_json_file(path, "script")
        if not isinstance(data, list):
            raise UsageError(f"script {path} must be a JSON array of turns")
        try:
            return cls(data, name=f"scripted:{path.name}")
        except ValueError as exc:
            raise UsageError(f"script {path}: {exc}") from None

    @property
    def remaining(self) -> int:
        return len(self._turns) - self._next

    def resume_at(self, turns: int) -> None:
        """Continue from turn ``turns`` (a resumed run: the turns before it were played)."""
        with self._lock:
            self._next = max(0, min(turns, len(self._turns)))

    def exhausted_message(self) -> str:
        return f"scripted model has no more turns (all {len(self._turns)} used)"

    def complete(self, request: ModelRequest) -> ModelTurn:
        with self._lock:
            if self._next >= len(self._turns):
                raise ModelError(self.exhausted_message())
            turn = self._turns[self._next]
            self._next += 1
        if self.keep_requests:
            self.requests.append(_kept(request))
        if turn.raw:  # a turn read from a script: it may say what it ``expects``
            _check_expected(turn, request, self._next - 1)
        if request.on_text and turn.text:
            request.on_text(turn.text)
        return turn


EXPECTS = "expects"
_QUOTED = 300  # characters of the observation a failed ``expects`` quotes


def _check_expected(turn: ModelTurn, request: ModelRequest, index: int) -> None:
    """A ``ModelError`` when ``turn`` expects a text the last observation does not contain."""
    expected = turn.raw.get(EXPECTS) if isinstance(turn.raw, Mapping) else None
    if expected is None:
        return
    last = next((m.content for m in reversed(request.messages) if m.role == "tool"), None)
    if last is not None and expected in last:
        return
    seen = "there was none" if last is None else f"it was: {_quoted(last)}"
    raise ModelError(
        f"script turn {index} expects the last observation to contain {expected!r}; {seen}"
    )


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _QUOTED else text[:_QUOTED] + "…"


def _kept(request: ModelRequest) -> ModelRequest:
    messages = request.messages
    kept = messages.view() if isinstance(messages, History) else tuple(messages)
    return dataclasses.replace(request, messages=kept)


class FunctionModel:
    """A model whose replies come from ``function(request)``: a ``ModelTurn``, a string (the
    reply text) or a dict shaped like a ``ScriptedModel`` turn. Anything else, or a dict that
    is not a turn, is a ``ModelError`` that says so."""

    def __init__(
        self,
        function: Callable[[ModelRequest], ModelTurn | str | Mapping[str, Any]],
        *,
        native_tools: bool = True,
        name: str = "function",
    ) -> None:
        self.function = function
        self.native_tools = native_tools
        self.name = name

    def complete(self, request: ModelRequest) -> ModelTurn:
        reply = self.function(request)
        if isinstance(reply, ModelTurn):
            return reply
        if isinstance(reply, str):
            return ModelTurn(text=reply)
        if isinstance(reply, Mapping):
            try:
                return to_turn(reply, request.step)
            except Exception as exc:  # a dict that is not a turn: say what is wrong with it
                raise ModelError(f"{self.name}: {describe_exception(exc)}") from None
        raise ModelError(
            f"{self.name} returned {type(reply).__name__}; return a ModelTurn, a string "
            "or a dict shaped like a ScriptedModel turn"
        )


def to_turn(turn: ScriptTurn, index: int) -> ModelTurn:
    if isinstance(turn, ModelTurn):
        return turn
    if isinstance(turn, str):
        return ModelTurn(text=turn)
    if not isinstance(turn, Mapping):
        raise ValueError(f"turn {index} must be an object or a string")
    listed = turn.get("tool_calls") or []
    if not isinstance(listed, list):
        raise ValueError(f"turn {index}: tool_calls must be a list")
    for key in ("reasoning", "finish_reason", EXPECTS):
        if turn.get(key) is not None and not isinstance(turn[key], str):
            raise ValueError(f"turn {index}: {key} must be a string")
    calls = tuple(_to_call(call, index, n) for n, call in enumerate(listed))
    try:
        usage = Usage.from_dict(turn.get("usage") or {})
    except ValueError as exc:
        raise ValueError(f"turn {index}: {exc}") from None
    return ModelTurn(
        text=str(turn.get("content") or ""),
        reasoning=turn.get("reasoning"),
        tool_calls=calls,
        finish_reason=turn.get("finish_reason") or ("tool_calls" if calls else "stop"),
        usage=usage,
        raw=dict(turn),
    )


def _to_call(call: Any, turn_index: int, call_index: int) -> ToolCall:
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise ValueError(f"turn {turn_index}: each tool call needs a string 'name'")
    call_id = str(call.get("id") or own_call_id(turn_index, call_index))
    # A dict of arguments becomes its JSON text in ToolCall; a string is kept as written.
    arguments = call.get("arguments", {})
    return ToolCall(id=call_id, name=call["name"], arguments=arguments, wire_id=call_id)


def from_spec(provider: str, name: str, settings: ModelSettings) -> ScriptedModel:
    if not name:
        raise UsageError("scripted model needs a file: --model scripted:FILE.json")
    return ScriptedModel.from_file(name)
