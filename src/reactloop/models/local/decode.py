"""One constrained generation on a loaded ``llama_cpp.Llama``, token by token.

Driving ``Llama.generate`` directly (rather than ``create_completion``) keeps the exact tokens
generated (so the next prompt can reuse them), lets streamed text hold back a possible stop
sequence, and stops cleanly at the deadline of the run.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reactloop.messages import FinishReason
from reactloop.models.base import ModelRequest


@dataclass(kw_only=True)
class Generation:
    """What one call produced, with llama.cpp's own counters of evaluated tokens."""

    text: str = ""
    tokens: list[int] = field(default_factory=list)
    finish_reason: FinishReason = "length"
    seconds: float = 0.0
    perf: dict[str, float] = field(default_factory=dict)
    deadline_hit: bool = False

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
        }


def common_prefix(llama: Any, prompt: Sequence[int]) -> int:
    """How many leading tokens of ``prompt`` are already in the model's KV cache."""
    cached = llama._input_ids
    count = 0
    for have, want in zip(cached, prompt, strict=False):
        if have != want:
            break
        count += 1
    return count


def decode(
    llama: Any,
    prompt: list[int],
    *,
    grammar: str | None,
    request: ModelRequest,
    temperature: float,
    seed: int,
    repeat_penalty: float,
    max_tokens: int,
) -> Generation:
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    result = Generation()
    started = time.monotonic()
    deadline = None if request.timeout is None else started + max(request.timeout, 0.0)
    stream = _Stream(request)
    llama.set_seed(seed)
    llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
    tokens = llama.generate(
        prompt,
        temp=temperature,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=repeat_penalty,
        grammar=LlamaGrammar.from_string(grammar) if grammar is not None else None,
    )
    vocab = llama._model.vocab
    for token in tokens:
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            result.finish_reason = "stop"
            break
        result.tokens.append(token)
        if stream.add(llama.detokenize([token])):
            result.finish_reason = "stop"
            break
        if len(result.tokens) >= max_tokens:
            break
        if deadline is not None and time.monotonic() > deadline:
            result.deadline_hit = True
            break
    tokens.close()
    result.text = stream.finish()
    result.seconds = time.monotonic() - started
    result.perf = _perf(llama_cpp, llama)
    return result


class _Stream:
    """Decodes bytes as they come, cuts at a stop sequence, and streams only safe text."""

    def __init__(self, request: ModelRequest) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stops = [s for s in request.stop if s]
        self._hold = max((len(s) for s in self._stops), default=1) - 1
        self._on_text = request.on_text
        self._text = ""
        self._sent = 0

    def add(self, piece: bytes) -> bool:
        """Add a token's bytes; True when a stop sequence appeared (the text is cut there)."""
        self._text += self._decoder.decode(piece)
        for stop in self._stops:
            position = self._text.find(stop)
            if position >= 0:
                self._text = self._text[:position]
                return True
        self._emit(len(self._text) - self._hold)
        return False

    def finish(self) -> str:
        self._text += self._decoder.decode(b"", final=True)
        self._emit(len(self._text))
        return self._text

    def _emit(self, end: int) -> None:
        if self._on_text is not None and end > self._sent:
            self._on_text(self._text[self._sent : end])
            self._sent = end


def _perf(llama_cpp: Any, llama: Any) -> dict[str, float]:
    data = llama_cpp.llama_perf_context(llama._ctx.ctx)
    return {
        name: float(getattr(data, name))
        for name in ("t_p_eval_ms", "t_eval_ms", "n_p_eval", "n_eval")
    }
