"""What one generation produced (``Generation``), and how much of a prompt the cache holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.messages import FinishReason


@dataclass(kw_only=True)
class Generation:
    """What one call produced, with llama.cpp's own counters of evaluated tokens."""

    text: str = ""
    tokens: list[int] = field(default_factory=list)
    finish_reason: FinishReason = "length"
    seconds: float = 0.0
    perf: dict[str, float] = field(default_factory=dict)
    deadline_hit: bool = False
    prompt_evaluated: int = 0  # prompt tokens this call evaluated (the rest came from the cache)

    def stats(self) -> dict[str, Any]:
        eval_ms = self.perf.get("t_eval_ms", 0.0)
        generated = self.perf.get("n_eval", 0.0)
        return {
            "generated_tokens": len(self.tokens),
            "seconds": round(self.seconds, 4),
            "prompt_eval_ms": round(self.perf.get("t_p_eval_ms", 0.0), 2),
            "llama_prompt_evaluated": int(self.perf.get("n_p_eval", 0)),
            "llama_single_evaluated": int(generated),
            "tokens_per_second": round(generated * 1000.0 / eval_ms, 2) if eval_ms else None,
            "deadline_hit": self.deadline_hit,
            "prompt_read_tokens": self.prompt_evaluated,
        }


def shared_prefix(cached: Sequence[int], prompt: Sequence[int]) -> int:
    """How many leading tokens ``cached`` and ``prompt`` have in common."""
    count = 0
    for have, want in zip(cached, prompt, strict=False):
        if have != want:
            break
        count += 1
    return count
