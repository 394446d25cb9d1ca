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
    """The redacted reasoning in a turn's ``raw_message`` (as the journal keeps it), or None:
    Anthropic's ``redacted_thinking`` blocks, or the Responses API's reasoning items that hold
    only ``encrypted_content`` (no summary to read)."""
    if not isinstance(raw_message, Mapping):
        return None
    content = raw_message.get("content")
    found = [
        block
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, Mapping) and block.get("type") in REDACTED_BLOCK_TYPES
    ]
    output = raw_message.get("output")
    found += [
        {"data": item["encrypted_content"]}
        for item in (output if isinstance(output, list) else [])
        if isinstance(item, Mapping)
        and item.get("type") == "reasoning"
        and isinstance(item.get("encrypted_content"), str)
        and not item.get("summary")
        and not item.get("content")
    ]
    if not found:
        return None
    return RedactedReasoning(blocks=len(found), size=sum(_size(block) for block in found))


def _size(block: Mapping[str, Any]) -> int:
    data = block.get("data")
    return len(data.encode("utf-8", errors="replace")) if isinstance(data, str) else 0
