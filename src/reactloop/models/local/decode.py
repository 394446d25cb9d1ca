"""One constrained generation on a loaded ``llama_cpp.Llama``, token by token.

Driving ``Llama.generate`` directly (rather than ``create_completion``) keeps the exact tokens
generated (so the next prompt can reuse them), lets streamed text hold back a possible stop
sequence, and stops cleanly at the deadline of the run.

The deadline is kept while the prompt is read too, not only between generated tokens: on a busy
machine reading a long prompt can take longer than the whole time limit, and the parent would
then kill the process. ``prefill`` evaluates all of the prompt but its last token in chunks,
checking the deadline between them (near the deadline a chunk is sized to take about
``CHUNK_SECONDS`` at the speed measured so far, far from it a full batch); ``Llama.generate``
then finds that prefix in the KV cache and evaluates only the last token.
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


FIRST_CHUNK = 8  # tokens of the first prompt chunk under a deadline, before the speed is known
CHUNK_SECONDS = 0.25  # the time one later chunk should take: well within the parent's grace


def prefill(llama: Any, prompt: Sequence[int], deadline: float | None) -> tuple[int, bool]:
    """Put ``prompt[:-1]`` in the KV cache, reusing the prefix already there; returns how many
    tokens were evaluated and whether it was all done before ``deadline``."""
    target = len(prompt) - 1
    kept = min(common_prefix(llama, prompt), target)
    if kept < llama.n_tokens and not llama._ctx.kv_cache_seq_rm(-1, kept, -1):
        llama.reset()  # this model's cache cannot drop a suffix: read the prompt afresh
        kept = 0
    llama.n_tokens = kept
    chunk = llama.n_batch if deadline is None else min(FIRST_CHUNK, llama.n_batch)
    while llama.n_tokens < target:
        if deadline is not None and time.monotonic() >= deadline:
            return llama.n_tokens - kept, False
        start, began = llama.n_tokens, time.monotonic()
        llama.eval(prompt[start : min(target, start + chunk)])
        if deadline is not None:
            chunk = _next_chunk(llama.n_tokens - start, began, deadline, llama.n_batch)
    return llama.n_tokens - kept, True


def _next_chunk(done: int, began: float, deadline: float, most: int) -> int:
    """Tokens the next chunk may hold: as many as take ``CHUNK_SECONDS`` at the last chunk's
    speed, or a quarter of the time left when that is more (full batches far from the limit)."""
    now = time.monotonic()
    rate = done / max(now - began, 1e-6)
    budget = max(CHUNK_SECONDS, (deadline - now) / 4)
    return max(1, min(most, int(rate * budget)))


def common_prefix(llama: Any, prompt: Sequence[int]) -> int:
    """How many leading tokens of ``prompt`` are already in the model's KV cache."""
    return shared_prefix(llama._input_ids, prompt)


def shared_prefix(cached: Sequence[int], prompt: Sequence[int]) -> int:
    """How many leading tokens ``cached`` and ``prompt`` have in common."""
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
    deadline: float | None,
) -> Generation:
    """Generate for ``prompt`` until a stop, ``max_tokens`` or ``deadline`` (monotonic time)."""
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    result = Generation()
    started = time.monotonic()
    stream = _Stream(request)
    llama.set_seed(seed)
    llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
    result.prompt_evaluated, in_time = prefill(llama, prompt, deadline)
    if not in_time:
        return _finish(result, stream, started, llama_cpp, llama, deadline_hit=True)
    result.prompt_evaluated += 1  # generate() evaluates the last token
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
    return _finish(result, stream, started, llama_cpp, llama, deadline_hit=result.deadline_hit)


def _finish(
    result: Generation,
    stream: _Stream,
    started: float,
    llama_cpp: Any,
    llama: Any,
    *,
    deadline_hit: bool,
) -> Generation:
    result.deadline_hit = deadline_hit
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
