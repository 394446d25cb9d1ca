"""One entry of the history: ``Message`` and its ``Role``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from reactloop.messages.calls import ToolCall
from reactloop.support.fast_init import fast_init

Role = Literal["system", "user", "assistant", "tool"]


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
