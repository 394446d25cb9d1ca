"""The seam between the loop and any model: one request in, one parsed turn out."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from reactloop.messages import Message, ModelTurn, ToolSpec

ToolChoice = str  # "auto" | "none" | "required" | a tool name


@dataclass(frozen=True, kw_only=True)
class ReactFormat:
    """What the text ReAct adapter tells the model it wraps (``ModelRequest.react``).

    The reply is to be one text ReAct step, ``Action:`` one of ``tools`` (each a name and its
    parameter names, in order) or ``Finish[answer]``; with ``finish_only``, ``Finish`` alone. A
    model that can constrain its reply (the local model's grammar) reads it; others ignore it.
    """

    tools: tuple[tuple[str, tuple[str, ...]], ...] = ()
    finish_only: bool = False


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """Everything a model needs for one call.

    ``messages`` is the loop's own append-only history (not a copy): adapters must not mutate
    it, and may cache what they rendered for a prefix of it. ``stop`` lists stop sequences.
    ``timeout`` is the wall-clock time left for this call, in seconds, when the run has a limit.
    ``on_text`` receives streamed text fragments as they arrive (adapters that stream call it).
    ``on_raw`` receives the request exactly as sent on the wire (for the journal); adapters
    should pass only what is new since the previous call, so that journals stay linear.
    ``answer_schema`` is the JSON Schema (object-rooted) of a typed answer, for adapters whose
    provider can constrain a reply to one (OpenAI's ``response_format``); the others ignore it.
    ``react`` is set by the text ReAct adapter on the requests it sends its inner model.
    ``deferred`` names the tools of ``tools`` to send deferred, behind the provider's own tool
    search; it is set only for a model whose ``native_tool_search`` is True.
    """

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    tool_choice: ToolChoice = "auto"
    stop: Sequence[str] = ()
    timeout: float | None = None
    step: int = 0
    on_text: Callable[[str], None] | None = None
    on_raw: Callable[[Any], None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    answer_schema: dict[str, Any] | None = None
    react: ReactFormat | None = None
    deferred: frozenset[str] = frozenset()


@runtime_checkable
class Model(Protocol):
    """A chat model. ``complete`` returns a ``ModelTurn`` or raises ``ModelError``.

    ``native_tools`` says whether the model accepts tool specs and returns structured calls;
    when it is False the agent wraps it in the text ReAct adapter. A model with an
    ``answers_json_schema = True`` attribute is asked for a typed answer as a reply constrained
    to ``ModelRequest.answer_schema`` instead of through the ``final_answer`` tool.
    """

    name: str
    native_tools: bool

    def complete(self, request: ModelRequest) -> ModelTurn: ...


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Options that apply to any provider; adapters ignore what they cannot use.

    ``timeout`` bounds each connect and each read of the HTTP adapters (a call that times out
    is retried); ``idle_timeout`` is the most seconds a call of theirs waits without a byte
    from the server, connecting included: then the call fails, not retried, and the run stops
    ``model_error`` (kind ``timeout``). Neither bounds a whole call: ``Limits.max_seconds`` does.
    """

    base_url: str | None = None
    api_key: str | None = None
    stream: bool = False
    seed: int | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    timeout: float | None = None
    idle_timeout: float | None = None
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        idle = self.idle_timeout
        if idle is not None and not 0 < idle < math.inf:
            raise ValueError(f"idle_timeout must be a positive number of seconds, not {idle!r}")
