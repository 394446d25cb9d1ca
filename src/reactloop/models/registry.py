"""The registry of providers: a spec ``PROVIDER[:NAME]`` → the adapter that builds it.

``PROVIDERS`` is read from the roster (``roster.py``): adding a provider is one row there, and
for a new protocol one adapter package with a ``from_spec(provider, name, settings)``.
Adapters are imported only when asked for, so ``import reactloop`` stays fast.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType

from reactloop.errors import UsageError
from reactloop.models.base import Model, ModelSettings
from reactloop.models.roster import ROSTER

# provider prefix -> "module:function"; the function is from_spec(provider, name, settings).
PROVIDERS: Mapping[str, str] = MappingProxyType({row.name: row.adapter for row in ROSTER.values()})
# A spec without a known provider that looks like a model name: the spec that was meant.
_SPEC_HINTS = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-"), "openai"),
    (("claude-",), "anthropic"),
    (("deepseek-",), "deepseek"),
)


def split_spec(spec: str) -> tuple[str, str]:
    provider, _, name = spec.partition(":")
    return provider.strip().lower(), name.strip()


def resolve_model(spec: str, settings: ModelSettings | None = None) -> Model:
    """Build the model a spec names; raises ``UsageError`` with a one-line reason."""
    provider, name = split_spec(spec)
    if provider not in PROVIDERS:
        raise UsageError(_unknown_spec(spec))
    model: Model = adapter_of(provider)(provider, name, settings or ModelSettings())
    return model


def adapter_of(provider: str) -> Callable[[str, str, ModelSettings], Model]:
    """The ``from_spec`` of a known ``provider``'s adapter, its modules imported (not its SDK:
    the adapter imports that when it makes its first model)."""
    module_name, _, function_name = PROVIDERS[provider].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("reactloop"):
            raise UsageError(f"provider {provider!r} is not available in this version") from None
        raise
    factory: Callable[[str, str, ModelSettings], Model] = getattr(module, function_name)
    return factory


def _misspelt_provider(text: str) -> str | None:
    """``opnai:gpt-4o`` meant ``openai:gpt-4o``; ``qwen3:8b`` (an Ollama NAME:TAG) meant
    ``ollama:qwen3:8b``."""
    provider, _, name = text.partition(":")
    if not provider.isalpha():
        return f"ollama:{text}" if provider and name else None
    near = difflib.get_close_matches(provider.lower(), PROVIDERS, n=1, cutoff=0.7)
    return f"{near[0]}:{name}" if near else None


def _unknown_spec(spec: str) -> str:
    """``unknown model spec 'gpt-4o-mini'; did you mean 'openai:gpt-4o-mini'?``"""
    known = ", ".join(sorted(PROVIDERS))
    text = spec.strip()
    lowered = text.lower()
    meant = f"local:{text}" if lowered.endswith(".gguf") else None
    for prefixes, provider in _SPEC_HINTS:
        if meant is None and lowered.startswith(prefixes):
            meant = f"{provider}:{text}"
    if meant is None and ":" in text:
        meant = _misspelt_provider(text)
    hint = f"did you mean {meant!r}? " if meant else ""
    return f"unknown model spec {spec!r}; {hint}providers: {known}"
