"""Inside the model process: a loaded ``llama_cpp.Llama`` and the runs that share it.

``load_llama`` applies the CPU cure (see ``cpu.py``): on a CPU with AMX, llama.cpp's extra
buffer types (the AMX kernels and the repacked CPU layouts) are turned off, because the AMX
matrix kernel crashes there. Each ``Session`` is one ``LocalLlamaModel`` on the parent's side:
its own append-only prompt (``chat_format.PromptTokens``), so the KV cache keeps the prefix
between the steps of a run and only the new suffix is evaluated.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reactloop.errors import MissingDependency, ModelError, UsageError
from reactloop.messages import ModelTurn, Usage
from reactloop.models.base import ModelRequest
from reactloop.models.local.catalog import BROKEN_HINT, LOCAL_EXTRA_HINT
from reactloop.models.local.chat_format import PromptTokens, detect_format
from reactloop.models.local.cpu import build_has_amx, extra_buffer_types_allowed
from reactloop.models.local.decode import Generation, common_prefix, decode
from reactloop.models.local.grammar import (
    check_grammar,
    json_schema_grammar,
    react_grammar,
    tool_call_schema,
)
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.turns import native_turn, to_turns


def require_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise MissingDependency(f"local models need llama-cpp-python: {LOCAL_EXTRA_HINT}") from None
    except (OSError, RuntimeError) as exc:  # installed, but its shared library does not load
        raise MissingDependency(f"llama-cpp-python {BROKEN_HINT}: {exc}") from None
    return llama_cpp


def system_info() -> str:
    """What llama.cpp was built for: ``CPU : SSE3 = 1 | … | AVX512 = 1 | … | REPACK = 1 |``."""
    raw = require_llama_cpp().llama_print_system_info()
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def load_llama(path: Path, options: LocalOptions) -> Any:
    """A ``Llama`` for ``path``, with llama.cpp's extra buffer types off where they crash."""
    llama_cpp = require_llama_cpp()
    extra_bufts = extra_buffer_types_allowed(
        options.extra_buffer_types, built_with_amx=build_has_amx(system_info())
    )
    try:
        with model_params_defaults(llama_cpp, use_extra_bufts=extra_bufts):
            return llama_cpp.Llama(
                model_path=str(path),
                n_ctx=options.n_ctx,
                n_threads=options.n_threads,
                n_threads_batch=options.n_threads,
                seed=options.seed,
                verbose=False,
            )
    except ValueError as exc:
        raise UsageError(f"cannot load model file {path}: {exc}") from None


@contextmanager
def model_params_defaults(llama_cpp: Any, *, use_extra_bufts: bool) -> Iterator[None]:
    """``Llama`` takes no ``use_extra_bufts``; it reads llama.cpp's defaults, so set it there."""
    bindings = llama_cpp.llama_cpp
    original = bindings.llama_model_default_params
    if not hasattr(original(), "use_extra_bufts"):
        raise MissingDependency(
            "this llama-cpp-python is too old to turn off llama.cpp's extra buffer types: "
            f"pip install -U 'llama-cpp-python>=0.3.16' (or {LOCAL_EXTRA_HINT})"
        )

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = use_extra_bufts
        return params

    bindings.llama_model_default_params = defaults
    try:
        yield
    finally:
        bindings.llama_model_default_params = original


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What one step is decoded under: the protocol and the grammar (None: unconstrained)."""

    native: bool
    grammar: str | None


def step_plan(request: ModelRequest, *, grammar: bool = True) -> Plan:
    """The protocol of a request (text ReAct marks its requests) and the grammar it gets."""
    react = request.react
    native = react is None
    if not grammar:
        return Plan(native=native, grammar=None)
    if react is not None:
        return Plan(native=False, grammar=react_grammar(react))
    schema = tool_call_schema(request.tools, request.tool_choice)
    return Plan(native=True, grammar=json_schema_grammar(schema))


class Session:
    """One model's steps on a shared ``Llama``: its prompt grows, the KV cache keeps up."""

    def __init__(self, llama: Any, options: LocalOptions, name: str) -> None:
        self.llama = llama
        self.options = options
        self.name = name
        template = llama.metadata.get("tokenizer.chat_template")
        bos = [llama.token_bos()] if llama._model.add_bos_token() else []
        self._prompt = PromptTokens(detect_format(template), self._tokenize, bos)
        self._previous_prompt_tokens = 0
        self._sent_grammar: str | None = None
        self._checked_grammars: set[str] = set()

    def _tokenize(self, text: str, special: bool) -> list[int]:
        tokens = self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special)
        return list(tokens)

    def complete(self, request: ModelRequest) -> ModelTurn:
        # The time limit counts from here: rendering and tokenizing the prompt take time too.
        started = time.monotonic()
        deadline = None if request.timeout is None else started + max(request.timeout, 0.0)
        plan = step_plan(request, grammar=self.options.grammar)
        turns = to_turns(
            request.messages,
            request.tools,
            native=plan.native,
            worked_example=self.options.worked_example,
        )
        if plan.grammar is not None and plan.grammar not in self._checked_grammars:
            check_grammar(self.llama, plan.grammar)
            self._checked_grammars.add(plan.grammar)
        prompt, _ = self._prompt.build(turns)
        self._check_context(len(prompt))
        reused = min(common_prefix(self.llama, prompt), len(prompt) - 1)
        self._send_raw(request, prompt, reused, plan.grammar)
        generation = decode(
            self.llama,
            prompt,
            grammar=plan.grammar,
            request=request,
            temperature=self.options.temperature,
            seed=self.options.seed,
            repeat_penalty=self.options.repeat_penalty,
            max_tokens=min(self.options.max_output_tokens, self.options.n_ctx - len(prompt)),
            deadline=deadline,
        )
        self._prompt.remember_generated(generation.text, generation.tokens)
        return self._turn(request, generation, len(prompt), reused, plan)

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
        new_text = self.llama.detokenize(prompt[reused:], special=True)
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
        prompt_tokens: int,
        reused: int,
        plan: Plan,
    ) -> ModelTurn:
        added = prompt_tokens - self._previous_prompt_tokens
        self._previous_prompt_tokens = prompt_tokens
        kind = "json_schema" if plan.native else "react"
        stats = {
            "prompt_tokens": prompt_tokens,
            "reused_tokens": reused,
            "evaluated_tokens": prompt_tokens - reused,
            "added_tokens": added,
            **generation.stats(),
            "grammar": None if plan.grammar is None else kind,
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
        if not plan.native or generation.finish_reason == "length":
            return base
        return native_turn(generation.text, step=request.step, base=base)
