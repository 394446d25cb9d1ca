"""Reasoning a provider redacted: the opaque blocks of a turn's raw message (Anthropic's
``redacted_thinking``: encrypted data and no text). The adapter echoes them back unchanged;
the viewer and the console show that they were there, and how much data they hold, since
there is nothing to read. One wording for both (``RedactedReasoning.describe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REDACTED_BLOCK_TYPES = frozenset({"redacted_thinking"})


@dataclass(frozen=True, kw_only=True)
class RedactedReasoning:
    """``blocks`` redacted reasoning blocks holding ``size`` bytes of opaque data in all."""

    blocks: int
    size: int

    def describe(self) -> str:
        what = "" if self.blocks == 1 else f"{self.blocks:,} blocks "
        return (
            f"{what}redacted by the provider: {self.size:,} bytes of opaque data, "
            "echoed back unchanged"
        )


def redacted_reasoning(raw_message: Any) -> RedactedReasoning | None:
    """The redacted reasoning in a turn's ``raw_message`` (as the journal keeps it), or None."""
    content = raw_message.get("content") if isinstance(raw_message, Mapping) else None
    if not isinstance(content, list):
        return None
    found = [
        block
        for block in content
        if isinstance(block, Mapping) and block.get("type") in REDACTED_BLOCK_TYPES
    ]
    if not found:
        return None
    return RedactedReasoning(blocks=len(found), size=sum(_size(block) for block in found))


def _size(block: Mapping[str, Any]) -> int:
    data = block.get("data")
    return len(data.encode("utf-8", errors="replace")) if isinstance(data, str) else 0
