"""The registry of providers: a spec ``PROVIDER[:NAME]`` → the adapter that builds it.

Adding a provider is one adapter package with a ``from_spec(provider, name, settings)``
function and one line in ``PROVIDERS``. Adapters are imported only when asked for, so
``import reactloop`` stays fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from reactloop.errors import UsageError
from reactloop.models.base import Model

# provider prefix -> "module:function"; the function is from_spec(provider, name, settings).
PROVIDERS: dict[str, str] = {
    "scripted": "reactloop.models.scripted:from_spec",
    "replay": "reactloop.replay.model:from_spec",
    "openai": "reactloop.models.openai:from_spec",
    "deepseek": "reactloop.models.openai:from_spec",
    "qwen": "reactloop.models.openai:from_spec",
    "ollama": "reactloop.models.openai:from_spec",
    "vllm": "reactloop.models.openai:from_spec",
    "sglang": "reactloop.models.openai:from_spec",
    "llamacpp": "reactloop.models.openai:from_spec",
    "local": "reactloop.models.local:from_spec",
    "anthropic": "reactloop.models.anthropic:from_spec",
    "responses": "reactloop.models.responses:from_spec",
}
# A spec without a known provider that looks like a model name: the spec that was meant.
_SPEC_HINTS = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-"), "openai"),
    (("claude-",), "anthropic"),
    (("deepseek-",), "deepseek"),
)


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Options that apply to any provider; adapters ignore what they cannot use."""

    base_url: str | None = None
    api_key: str | None = None
    stream: bool = False
    seed: int | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    timeout: float | None = None
    max_retries: int = 2
    extra: dict[str, Any] = field(default_factory=dict)


def split_spec(spec: str) -> tuple[str, str]:
    provider, _, name = spec.partition(":")
    return provider.strip().lower(), name.strip()


def resolve_model(spec: str, settings: ModelSettings | None = None) -> Model:
    """Build the model a spec names; raises ``UsageError`` with a one-line reason."""
    provider, name = split_spec(spec)
    target = PROVIDERS.get(provider)
    if target is None:
        raise UsageError(_unknown_spec(spec))
    module_name, _, function_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("reactloop"):
            raise UsageError(f"provider {provider!r} is not available in this version") from None
        raise
    factory = getattr(module, function_name)
    model: Model = factory(provider, name, settings or ModelSettings())
    return model


def _unknown_spec(spec: str) -> str:
    """``unknown model spec 'gpt-4o-mini'; did you mean 'openai:gpt-4o-mini'?``"""
    known = ", ".join(sorted(PROVIDERS))
    text = spec.strip()
    lowered = text.lower()
    meant = f"local:{text}" if lowered.endswith(".gguf") else None
    for prefixes, provider in _SPEC_HINTS:
        if meant is None and lowered.startswith(prefixes):
            meant = f"{provider}:{text}"
    hint = f"did you mean {meant!r}? " if meant else ""
    return f"unknown model spec {spec!r}; {hint}providers: {known}"
