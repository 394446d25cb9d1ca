"""Vendor-neutral values that flow through the loop.

Every type here is a frozen, keyword-only dataclass (with ``support.fast_init``'s faster
``__init__`` for the ones the loop makes every step). Adapters translate between these and a
provider's wire format; the loop never sees a wire format. ``raw`` fields keep what a provider
sent (for the journal and for adapters that must echo a message unchanged); the loop never
reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any, Literal

from reactloop.support.fast_init import fast_init
from reactloop.support.json_decode import MAX_DEPTH
from reactloop.support.json_encode import dumps, safe_form

Role = Literal["system", "user", "assistant", "tool"]

# Finish reasons a ModelTurn may carry (adapters map provider values onto these).
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "other"]


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Tokens of one model call, or a sum of calls.

    ``cached_tokens`` is the part of ``input_tokens`` served from a provider's prefix cache;
    ``cache_write_tokens`` the part written to it (Anthropic's ``cache_creation_input_tokens``,
    billed at its own rate); ``reasoning_tokens`` is the part of ``output_tokens`` spent on
    hidden reasoning.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Usage:
        """Counts from JSON (a missing one is 0); ValueError for anything but whole numbers."""
        if not isinstance(data, dict):
            raise ValueError(f"usage must be an object, not {type(data).__name__}")
        return cls(**{key: _token_count(data, key) for key in cls.__dataclass_fields__})


MAX_TOKEN_COUNT = 10**15  # beyond any run (and exact as a float): a larger count is not a count


def token_count(value: Any) -> int | None:
    """``value`` read as a token count from JSON anyone may have written (a provider's
    ``usage``, a journal): a number or a numeric string from 0 to ``MAX_TOKEN_COUNT``, a
    fraction cut to its whole part; None for anything else (a bool, NaN, a negative or an
    absurd number, ``"lots"``, a 5000-digit string).

    The one reader of foreign token counts: the adapters' usage readers read a field absent
    or not a count as 0 (``count_of``), ``Usage.from_dict`` refuses it.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = int(value)
    except (ValueError, OverflowError):  # "abc", inf, nan, a string of too many digits
        return None
    return number if 0 <= number <= MAX_TOKEN_COUNT else None


def count_of(fields: Any, key: str) -> int:
    """The token count under ``key`` of a JSON object from outside; 0 when it has none."""
    value = fields.get(key) if isinstance(fields, Mapping) else None
    return token_count(value) or 0


def exact_count(value: Any) -> int | None:
    """``value`` as the count a ``Usage`` keeps: a whole number (an int, or a float without a
    fraction) from 0 to ``MAX_TOKEN_COUNT``; None for anything else (NaN, a fraction, a bool,
    a negative or an absurd number such as 2**53, a string).

    The one rule for the counts of a ``Usage``, kept on both sides of the journal:
    ``Usage.from_dict`` (replay, resume) refuses a count that fails it, and the loop counts a
    model's such count as 0, with a ``bad_usage`` warning (``loop.model_call``), so a run
    never journals a count that replay refuses.
    """
    if type(value) is int:  # the common case
        return value if 0 <= value <= MAX_TOKEN_COUNT else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    count = token_count(value)
    return count if count is not None and count == value else None


def _token_count(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"usage {key} must be a number, not {type(value).__name__}")
    count = exact_count(value)
    if count is None:  # NaN, a fraction, out of range
        raise ValueError(f"usage {key} must be a whole number of tokens, not {value!r}")
    return count


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """A call the model asked for.

    ``id`` is unique within a run (our bookkeeping); ``wire_id`` is the id the provider sent,
    which may be missing, empty or repeated; None means the provider's id is ``id`` itself.
    ``echo_id`` is the id every adapter echoes back. ``arguments`` is
    the argument text exactly as the model wrote it (JSON for native calls; it may be invalid);
    a dict (or any other value) given instead is stored as its JSON text, None as ``""``.
    """

    id: str
    name: str
    arguments: str = ""
    wire_id: str | None = None

    def __post_init__(self) -> None:
        if not type(self.arguments) is type(self.name) is type(self.id) is str:
            _normalise_call(self)

    @property
    def echo_id(self) -> str:
        """The id to send back to the provider: its own, else (None, or ``""``: it sent none)
        the loop's."""
        return self.wire_id or self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "wire_id": self.wire_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            arguments=str(data.get("arguments") or ""),
            wire_id=data.get("wire_id"),
        )


def own_call_id(step: int, index: int = 0) -> str:
    """The id of a call that came without one (text ReAct, the local model, a script, a
    provider's empty id made unique by the loop): ``call_<step>_<index>``."""
    return f"call_{step}_{index}"


def _normalise_call(call: ToolCall) -> None:
    """Text fields from whatever an adapter or a test passed (a frozen value: set once, here)."""
    arguments: Any = call.arguments
    if arguments is None:
        arguments = ""
    elif not isinstance(arguments, str):
        try:
            arguments = dumps(arguments)
        except Exception:  # deep nesting, a cycle, a failing __str__: still an argument text
            arguments = dumps(safe_form(arguments, max_depth=MAX_DEPTH))
    object.__setattr__(call, "arguments", str(arguments))
    object.__setattr__(call, "name", _text(call.name))
    object.__setattr__(call, "id", _text(call.id))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    return "" if value is None else dumps(safe_form(value, max_depth=1))[:200].strip('"')


def not_executed(reason: str) -> str:
    """The error of a call that never ran: ``not executed: reason`` (refused before it started,
    cancelled, left unanswered). One spelling, read by the loop, the adapters and replay."""
    return f"not executed: {reason}"


UNANSWERED = not_executed("no result was recorded")

NotRun = Literal[
    "tool_call_limit",  # the budget: the tool call limit was reached
    "time_limit",  # the budget: the run's time was up
    "loop_guard",  # the loop guard refused it (the run goes on)
    "loop_detected",  # the loop guard stopped the run on it
    "run_stopped",  # a later call of that turn
    "declined",  # the approver said no (or failed)
    "deferred",  # the approver put it off (it gets no result)
    "cancelled",  # the run was cancelled before it ran, or at its approval
    "stopped",  # left open when the run stopped (``not executed: <stop reason>``)
    "reply_cut_off",  # a call of a reply cut off at the output limit
    "reply_unreadable",  # a call of a reply that could not be read
    "uncertain",  # resumed: it may have run before, and was not run again
]
"""Why a call did not run: ``ToolResult.not_run``, written where the result is made."""
"""The error an adapter sends for a call of the history that has no result at all."""


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """What running (or refusing) one tool call produced.

    It reaches the model as JSON: ``{"ok": true, "output": ...}`` or
    ``{"ok": false, "error": "..."}``, plus ``"truncated": true`` when output was cut.
    """

    call_id: str
    name: str
    ok: bool
    output: Any = None
    error: str | None = None
    truncated: bool = False
    full_output_path: str | None = None
    executed: bool = True
    seconds: float = 0.0
    not_run: NotRun | None = None  # why the call did not run (None: it ran, or failed as it ran)

    @classmethod
    def refused(cls, call_id: str, name: str, error: str, not_run: NotRun) -> ToolResult:
        """The result of a call that did not run: ``error`` for the model, ``not_run`` why."""
        return cls(call_id=call_id, name=name, ok=False, error=error, executed=False,
                   not_run=not_run)  # fmt: skip

    def to_content(self) -> str:
        """The JSON text the model sees."""
        if self.ok and not self.truncated:  # the common results, spelled as ``dumps`` would
            kind = type(self.output)
            if kind is str:
                return '{"ok": true, "output": ' + encode_basestring(self.output) + "}"
            if kind is int:
                return f'{{"ok": true, "output": {self.output}}}'
        body: dict[str, Any] = {"ok": self.ok}
        if self.ok:
            body["output"] = self.output
        else:
            body["error"] = self.error
        if self.truncated:
            body["truncated"] = True
            if self.full_output_path:
                body["full_output"] = self.full_output_path
        return dumps(body)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "call_id": self.call_id,
            "name": self.name,
            "ok": self.ok,
            "output": self.output,
            "error": self.error,
            "truncated": self.truncated,
            "full_output_path": self.full_output_path,
            "executed": self.executed,
            "seconds": self.seconds,
        }
        if self.not_run is not None:  # a call that did not run: why (``NotRun``)
            data["not_run"] = self.not_run
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolResult:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class Message:
    """One entry of the append-only history.

    ``kind`` tags messages the harness wrote itself (``"task"``, ``"notice"``,
    ``"format_error"``, ``"wind_down"``, ``"truncated"``), so adapters can render them in the
    style their protocol expects. ``raw`` is the provider's own assistant message, kept so the
    adapter that produced it can echo it unchanged.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    kind: str = ""
    raw: Any = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        if self.raw is not None:
            data["raw"] = self.raw
        if self.kind:
            data["kind"] = self.kind
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning"),
            kind=data.get("kind") or "",
            raw=data.get("raw"),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """What the model is told about a tool: a name, a description and a JSON Schema.

    ``raw_parameters`` is the tool's own schema when ``parameters`` is a simplified copy that
    every provider accepts (an MCP tool's: ``$ref``s inlined, ``oneOf`` kept); an adapter whose
    provider takes more renders its own form of it (``reactloop.tools.mcp.schema_for``).
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)
    raw_parameters: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerToolSearch:
    """One tool search a provider ran itself during a turn (Anthropic's tool-search tool, the
    Responses API's ``tool_search``): what the model asked for and the deferred tools it
    loaded, or the server's ``error``."""

    query: str
    found: tuple[str, ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"query": self.query, "found": list(self.found)}
        if self.error is not None:
            data["error"] = self.error
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ServerToolSearch:
        data = data if isinstance(data, Mapping) else {}
        found = data.get("found")
        error = data.get("error")
        return cls(
            query=str(data.get("query") or ""),
            found=tuple(str(n) for n in found) if isinstance(found, list) else (),
            error=error if isinstance(error, str) else None,
        )


@fast_init
@dataclass(frozen=True, kw_only=True, slots=True)
class ModelTurn:
    """One reply of a model, parsed.

    ``final_answer`` is set by adapters whose protocol marks an answer explicitly (text ReAct's
    ``Finish[...]``); otherwise a reply without tool calls answers with its ``text``.
    ``format_error`` is set when the reply could not be understood; the raw text is kept.
    ``notices`` are ``(kind, message)`` pairs the adapter wants the user to see (a prompt too
    short to cache, why the model refused): the run warns of each kind once.
    ``tool_searches`` are the searches the provider ran itself in this turn (its own tool
    search over the deferred tools); the loop journals them and reveals what they found.
    """

    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason = "stop"
    usage: Usage = field(default_factory=Usage)
    final_answer: str | None = None
    format_error: str | None = None
    raw: Any = None
    raw_message: Any = None
    notices: tuple[tuple[str, str], ...] = ()
    tool_searches: tuple[ServerToolSearch, ...] = ()

    @property
    def answer(self) -> str | None:
        """The final answer this turn gives, or None when it gives none."""
        if self.tool_calls or self.format_error:
            return None
        answer = self.final_answer if self.final_answer is not None else self.text
        return answer.strip() or None

    def to_dict(self) -> dict[str, Any]:
        data = {
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "finish_reason": self.finish_reason,
            "usage": self.usage.to_dict(),
            "final_answer": self.final_answer,
            "format_error": self.format_error,
            "raw_message": self.raw_message,
        }
        if self.tool_searches:
            data["tool_searches"] = [s.to_dict() for s in self.tool_searches]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelTurn:
        return cls(
            text=data.get("text") or "",
            reasoning=data.get("reasoning"),
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            finish_reason=data.get("finish_reason") or "stop",
            usage=Usage.from_dict(data.get("usage") or {}),
            final_answer=data.get("final_answer"),
            format_error=data.get("format_error"),
            raw_message=data.get("raw_message"),
            tool_searches=tuple(
                ServerToolSearch.from_dict(s) for s in data.get("tool_searches") or ()
            ),
        )
