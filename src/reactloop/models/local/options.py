"""How a local model runs: context size, threads, sampling, grammar, the CPU switch."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reactloop.errors import UsageError
from reactloop.models.local.engines import requested_engine

if TYPE_CHECKING:
    from reactloop.models.base import ModelSettings

DEFAULT_N_CTX = 4096
DEFAULT_MAX_OUTPUT_TOKENS = 256
DEFAULT_SEED = 0
EXTRA_BUFFER_TYPES = ("auto", "on", "off")


def default_threads() -> int:
    """``$REACTLOOP_LOCAL_THREADS``, else half the cores: llama.cpp's threads spin while they
    wait, and on a busy machine one thread per core collapses (measured: 40x slower)."""
    configured = os.environ.get("REACTLOOP_LOCAL_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass(frozen=True, kw_only=True)
class LocalOptions:
    """How a local model runs. ``grammar=False`` turns constrained decoding off (to compare).

    ``extra_buffer_types``: ``auto`` (off on CPUs with AMX, where llama.cpp's AMX kernel
    crashes; on elsewhere), ``on`` or ``off``. ``$REACTLOOP_LOCAL_EXTRA_BUFTS`` overrides it.
    ``engine``: ``auto`` or ``xllamacpp`` (``$REACTLOOP_LOCAL_ENGINE``; see engines.py).
    """

    n_ctx: int = DEFAULT_N_CTX
    n_threads: int = field(default_factory=lambda: default_threads())
    seed: int = DEFAULT_SEED
    temperature: float = 0.0
    repeat_penalty: float = 1.0
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    worked_example: bool = True
    grammar: bool = True
    extra_buffer_types: str = "auto"
    engine: str = field(default_factory=lambda: requested_engine())  # see engines.py


def options_from_settings(settings: ModelSettings) -> LocalOptions:
    extra = settings.extra
    defaults = LocalOptions()
    buffer_types = str(extra.get("extra_buffer_types", "auto")).lower()
    if buffer_types not in EXTRA_BUFFER_TYPES:
        raise UsageError(f"extra_buffer_types must be one of {', '.join(EXTRA_BUFFER_TYPES)}")
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
            extra_buffer_types=buffer_types,
            engine=requested_engine(None if extra.get("engine") is None else str(extra["engine"])),
        )
    except (TypeError, ValueError) as exc:
        raise UsageError(f"bad local model option: {exc}") from None
