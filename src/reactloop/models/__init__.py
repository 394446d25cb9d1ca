"""Models: the ``Model`` protocol, the registry of providers and ``resolve_model``.

A spec is ``PROVIDER[:NAME]`` (``openai:gpt-4o-mini``, ``scripted:demo.json``, ``local``).
Adding a provider is one adapter module with a ``from_spec`` function and one line in
``PROVIDERS``. Adapters are imported only when asked for, so ``import reactloop`` stays fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from reactloop.errors import UsageError
from reactloop.models.base import Model, ModelRequest

# provider prefix -> "module:function"; the function is from_spec(provider, name, settings).
PROVIDERS: dict[str, str] = {
    "scripted": "reactloop.models.scripted:from_spec",
    "replay": "reactloop.models.replay:from_spec",
    "openai": "reactloop.models.openai_chat:from_spec",
    "deepseek": "reactloop.models.openai_chat:from_spec",
    "qwen": "reactloop.models.openai_chat:from_spec",
    "ollama": "reactloop.models.openai_chat:from_spec",
    "vllm": "reactloop.models.openai_chat:from_spec",
    "sglang": "reactloop.models.openai_chat:from_spec",
    "llamacpp": "reactloop.models.openai_chat:from_spec",
    "local": "reactloop.models.local_llama:from_spec",
}


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
        known = ", ".join(sorted(PROVIDERS))
        raise UsageError(f"unknown model spec {spec!r}; providers: {known}")
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


__all__ = ["PROVIDERS", "Model", "ModelRequest", "ModelSettings", "resolve_model", "split_spec"]
