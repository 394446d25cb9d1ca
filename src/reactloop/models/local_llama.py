"""The embedded local model: llama.cpp in-process through llama-cpp-python.

``local`` (the default embedded model), ``local:smollm2-135m``, ``local:gemma3-270m`` or
``local:PATH.gguf``. Decoding is constrained: in the text protocol by a GBNF grammar made from
the toolbox, in the native protocol by a JSON Schema over the tool calls, so every step parses
and names a real tool. Sampling is greedy by default (temperature 0, fixed seed). The prompt is
rendered append-only (see ``chat_format``) so llama.cpp reuses its KV cache and evaluates only
the tokens added since the previous step; each turn reports evaluated versus reused tokens.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reactloop.errors import MissingDependency, ModelError, UsageError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.base import ModelRequest
from reactloop.models.catalog import DEFAULT_EMBEDDED, EMBEDDED, LOCAL_EXTRA_HINT, model_path
from reactloop.models.chat_format import PromptTokens, detect_format
from reactloop.models.grammar import (
    ReactSpec,
    check_grammar,
    json_schema_grammar,
    react_grammar,
    tool_call_schema,
)
from reactloop.models.local_decode import Generation, common_prefix, decode
from reactloop.models.local_turns import native_turn, to_turns

if TYPE_CHECKING:
    from reactloop.models import ModelSettings

DEFAULT_N_CTX = 4096
DEFAULT_MAX_OUTPUT_TOKENS = 256
DEFAULT_SEED = 0


def default_threads() -> int:
    """``$REACTLOOP_LOCAL_THREADS``, else half the cores: llama.cpp's threads spin while they
    wait, and on a busy machine one thread per core collapses (measured: 40x slower)."""
    configured = os.environ.get("REACTLOOP_LOCAL_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass(frozen=True, kw_only=True)
class LocalOptions:
    """How a local model runs. ``grammar=False`` turns constrained decoding off (to compare)."""

    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = field(default_factory=lambda: default_threads())
    seed: int = DEFAULT_SEED
    temperature: float = 0.0
    repeat_penalty: float = 1.0
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    worked_example: bool = True
    grammar: bool = True


class _Engine:
    """One loaded ``Llama``; models that use the same file share it (and its lock)."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.lock = threading.Lock()
        self.checked_grammars: set[str] = set()


_ENGINES: dict[tuple[str, int, int], _Engine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    # Close while llama_cpp's module globals still exist; its __del__ at interpreter
    # teardown prints tracebacks otherwise.
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.llama.close()
        _ENGINES.clear()


def require_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise MissingDependency(f"local models need llama-cpp-python: {LOCAL_EXTRA_HINT}") from None
    return llama_cpp


def load_engine(path: Path, options: LocalOptions) -> _Engine:
    llama_cpp = require_llama_cpp()
    key = (str(path), options.n_ctx, options.n_threads)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            try:
                llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=options.n_ctx,
                    n_threads=options.n_threads,
                    n_threads_batch=options.n_threads,
                    seed=options.seed,
                    verbose=False,
                )
            except ValueError as exc:
                raise UsageError(f"cannot load model file {path}: {exc}") from None
            engine = _ENGINES[key] = _Engine(llama)
        return engine


class LocalLlamaModel:
    """A GGUF model run in-process, with grammar-constrained steps and prefix reuse."""

    native_tools: bool = False
    load_seconds = 0.0

    def __init__(self, engine: _Engine, *, name: str, options: LocalOptions) -> None:
        self.name = name
        self.options = options
        self.prefers_worked_example = options.worked_example
        self._engine = engine
        llama = engine.llama
        template = llama.metadata.get("tokenizer.chat_template")
        bos = [llama.token_bos()] if llama._model.add_bos_token() else []
        self._prompt = PromptTokens(detect_format(template), self._tokenize, bos)
        self._previous_prompt_tokens = 0
        self._sent_grammar: str | None = None

    @property
    def llama(self) -> Any:
        """The underlying ``llama_cpp.Llama`` (shared; hold no reference across runs)."""
        return self._engine.llama

    def _tokenize(self, text: str, special: bool) -> list[int]:
        tokens = self._engine.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)
        return list(tokens)

    def grammar_for(self, request: ModelRequest) -> str | None:
        """The GBNF text this request is decoded under, or None without constraints."""
        if not self.options.grammar:
            return None
        react = request.extra.get("react")
        if isinstance(react, dict):
            spec = ReactSpec.from_extra(react)
            if react.get("finish_only"):
                spec = ReactSpec(tools=())
            return react_grammar(spec)
        return json_schema_grammar(tool_call_schema(request.tools, request.tool_choice))

    def complete(self, request: ModelRequest) -> ModelTurn:
        native = not isinstance(request.extra.get("react"), dict)
        turns = to_turns(
            request.messages,
            request.tools,
            native=native,
            worked_example=self.options.worked_example,
        )
        grammar = self.grammar_for(request)
        with self._engine.lock:
            if grammar is not None and grammar not in self._engine.checked_grammars:
                check_grammar(self._engine.llama, grammar)
                self._engine.checked_grammars.add(grammar)
            prompt, _ = self._prompt.build(turns)
            self._check_context(len(prompt))
            reused = min(common_prefix(self._engine.llama, prompt), len(prompt) - 1)
            self._send_raw(request, prompt, reused, grammar)
            generation = decode(
                self._engine.llama,
                prompt,
                grammar=grammar,
                request=request,
                temperature=self.options.temperature,
                seed=self.options.seed,
                repeat_penalty=self.options.repeat_penalty,
                max_tokens=min(self.options.max_output_tokens, self.options.n_ctx - len(prompt)),
            )
            self._prompt.remember_generated(generation.text, generation.tokens)
        return self._turn(
            request,
            generation,
            prompt_tokens=len(prompt),
            reused=reused,
            native=native,
            grammar=grammar,
        )

    def _check_context(self, prompt_tokens: int) -> None:
        if prompt_tokens + 16 > self.options.n_ctx:
            raise ModelError(
                f"the prompt has {prompt_tokens} tokens and the context holds "
                f"{self.options.n_ctx}; start a shorter run or raise n_ctx"
            )

    def _send_raw(
        self, request: ModelRequest, prompt: list[int], reused: int, grammar: str | None
    ) -> None:
        if request.on_raw is None:
            return
        new_text = self._engine.llama.detokenize(prompt[reused:], special=True)
        request.on_raw(
            {
                "model": self.name,
                "prompt_tokens": len(prompt),
                "reused_tokens": reused,
                "new_prompt_text": new_text.decode("utf-8", errors="replace"),
                "grammar": grammar if grammar != self._sent_grammar else "(unchanged)",
                "temperature": self.options.temperature,
                "seed": self.options.seed,
            }
        )
        self._sent_grammar = grammar

    def _turn(
        self,
        request: ModelRequest,
        generation: Generation,
        *,
        prompt_tokens: int,
        reused: int,
        native: bool,
        grammar: str | None,
    ) -> ModelTurn:
        added = prompt_tokens - self._previous_prompt_tokens
        self._previous_prompt_tokens = prompt_tokens
        stats = {
            "prompt_tokens": prompt_tokens,
            "reused_tokens": reused,
            "evaluated_tokens": prompt_tokens - reused,
            "added_tokens": added,
            **generation.stats(),
            "grammar": None if grammar is None else ("react" if not native else "json_schema"),
        }
        base = ModelTurn(
            text=generation.text,
            finish_reason=generation.finish_reason,
            usage=Usage(
                input_tokens=prompt_tokens,
                output_tokens=len(generation.tokens),
                cached_tokens=reused,
            ),
            raw=stats,
        )
        if not native or generation.finish_reason == "length":
            return base
        return native_turn(generation.text, step=request.step, base=base)


def options_from_settings(settings: ModelSettings) -> LocalOptions:
    extra = settings.extra
    defaults = LocalOptions()
    try:
        return LocalOptions(
            n_ctx=int(extra.get("n_ctx", defaults.n_ctx)),
            n_threads=int(extra.get("n_threads", defaults.n_threads)),
            seed=defaults.seed if settings.seed is None else int(settings.seed),
            temperature=0.0 if settings.temperature is None else float(settings.temperature),
            repeat_penalty=float(extra.get("repeat_penalty", defaults.repeat_penalty)),
            max_output_tokens=settings.max_output_tokens or defaults.max_output_tokens,
            worked_example=bool(extra.get("worked_example", True)),
            grammar=bool(extra.get("grammar", True)),
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad local model option: {exc}") from None


def from_spec(provider: str, name: str, settings: ModelSettings) -> LocalLlamaModel:
    """``local[:NAME|PATH.gguf]`` → a ready model (llama-cpp-python is imported here)."""
    require_llama_cpp()
    options = options_from_settings(settings)
    chosen = name.strip() or DEFAULT_EMBEDDED
    path = model_path(chosen)
    label = chosen.lower() if chosen.lower() in EMBEDDED else Path(chosen).name
    start = time.monotonic()
    engine = load_engine(path, options)
    model = LocalLlamaModel(engine, name=f"local:{label}", options=options)
    entry = EMBEDDED.get(chosen.lower())
    # By measurement (docs/local_models.md) the embedded models do better with JSON-schema
    # calls; an arbitrary GGUF file gets the text protocol, which any chat model can follow.
    model.native_tools = entry.native_tools if entry is not None else False
    model.load_seconds = time.monotonic() - start
    return model
