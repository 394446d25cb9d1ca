"""Inside the model process: llama-cpp-python's ``Llama`` as a session's ``Engine``.

The engine built from source on the machine (``pip install llama-cpp-python`` compiles
llama.cpp for this CPU, AVX-512 and AMX included). ``load_llama`` applies the CPU cure (see
``cpu.py``): on a CPU with AMX, llama.cpp's extra buffer types (the AMX kernels and the
repacked CPU layouts) are turned off, because the AMX matrix kernel crashes there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reactloop.errors import MissingDependency, UsageError
from reactloop.models.base import ModelRequest
from reactloop.models.local.catalog import BROKEN_HINT, LOCAL_EXTRA_HINT
from reactloop.models.local.cpu import build_has_amx, extra_buffer_types_allowed
from reactloop.models.local.decode import Generation, common_prefix, decode
from reactloop.models.local.grammar import check_grammar
from reactloop.models.local.options import LocalOptions


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


class LlamaCppEngine:
    """A loaded ``llama_cpp.Llama``: exact tokens, ``decode`` driving it token by token."""

    name = "llama-cpp-python"

    def __init__(self, llama: Any) -> None:
        self.llama = llama
        self.chat_template: str | None = llama.metadata.get("tokenizer.chat_template")
        self.bos: list[int] = [llama.token_bos()] if llama._model.add_bos_token() else []

    @classmethod
    def load(cls, path: Path, options: LocalOptions) -> LlamaCppEngine:
        return cls(load_llama(path, options))

    def info(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "use_extra_bufts": bool(self.llama.model_params.use_extra_bufts),
            "system_info": system_info(),
        }

    def tokenize(self, text: str, special: bool) -> list[int]:
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special))

    def detokenize(self, tokens: Sequence[int]) -> str:
        text: bytes = self.llama.detokenize(list(tokens), special=True)
        return text.decode("utf-8", errors="replace")

    def reusable(self, prompt: Sequence[int]) -> int:
        return common_prefix(self.llama, prompt)

    def check_grammar(self, grammar: str) -> None:
        check_grammar(self.llama, grammar)

    def generate(
        self,
        prompt: list[int],
        *,
        grammar: str | None,
        request: ModelRequest,
        options: LocalOptions,
        max_tokens: int,
        deadline: float | None,
    ) -> Generation:
        return decode(
            self.llama,
            prompt,
            grammar=grammar,
            request=request,
            temperature=options.temperature,
            seed=options.seed,
            repeat_penalty=options.repeat_penalty,
            max_tokens=max_tokens,
            deadline=deadline,
        )

    def probe(self, prompt: str, max_tokens: int) -> str:
        reply = self.llama(prompt, max_tokens=max_tokens, temperature=0.0)
        return str(reply["choices"][0]["text"])

    def close(self) -> None:
        self.llama.close()
