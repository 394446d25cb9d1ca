"""One reply of a model, parsed (``ModelTurn``), with the tool searches its provider ran."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reactloop.messages.calls import ToolCall
from reactloop.messages.tokens import Usage
from reactloop.support.fast_init import fast_init

# Finish reasons a ModelTurn may carry (adapters map provider values onto these).
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "other"]


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
