"""Which model ``reactloop run`` uses when no ``--model`` is given, and why.

Order: ``REACTLOOP_MODEL``; then configured API access, in the roster's order
(``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``DEEPSEEK_API_KEY``:
``roster.py``); then an Ollama server if one answers on localhost:11434 (or ``OLLAMA_HOST``)
within 0.3 s; then the embedded model, which needs no network at all. The reason is a
sentence the CLI prints on stderr.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from reactloop.models.roster import ROSTER, Provider

# The embedded model used when nothing else is configured; chosen by measurement
# (docs/local_models.md, benchmarks/local_models.py).
DEFAULT_EMBEDDED = "smollm2-135m"
OLLAMA_DEFAULT_HOST = "127.0.0.1:11434"
OLLAMA_TIMEOUT = 0.3
# Models that call tools well, best first; an Ollama server's first match wins.
OLLAMA_PREFERENCE = ("qwen3", "qwen2.5", "llama3.2", "llama3.1", "mistral", "gemma3", "smollm2")


def choose_default_model(
    env: Mapping[str, str] = os.environ, *, probe_ollama: bool = True
) -> tuple[str, str]:
    """The model spec to use without ``--model``, and the reason it was chosen."""
    explicit = env.get("REACTLOOP_MODEL", "").strip()
    if explicit:
        return explicit, f"REACTLOOP_MODEL is set to {explicit}"
    configured = _configured_provider(env)
    if configured is not None:
        return configured
    if probe_ollama:
        host = env.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT_HOST
        models = ollama_models(host)
        if models:
            name = pick_ollama_model(models)
            return f"ollama:{name}", f"an Ollama server answers on {host} and has {name}"
    spec = f"local:{DEFAULT_EMBEDDED}"
    why = "no API key in the environment"
    why += " and no Ollama server on localhost:11434" if probe_ollama else ""
    return spec, f"{why}: using the embedded model {DEFAULT_EMBEDDED} (offline, small, often wrong)"


def _configured_provider(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The first provider of the roster with a default model whose key is set (OpenAI's base
    URL alone counts too: a compatible server that needs no key)."""
    openai = ROSTER["openai"]
    if openai.base_url_env and env.get(openai.base_url_env, "").strip():
        url = env[openai.base_url_env]
        return _spec(openai, env), f"{openai.base_url_env} is set to {url}"
    for row in ROSTER.values():
        if row.default_model and row.key_env and env.get(row.key_env, "").strip():
            return _spec(row, env), f"{row.key_env} is set"
    return None


def _spec(row: Provider, env: Mapping[str, str]) -> str:
    model = (env.get(row.model_env, "").strip() if row.model_env else "") or row.default_model
    return f"{row.name}:{model}"


def ollama_models(host: str, timeout: float = OLLAMA_TIMEOUT) -> list[str]:
    """The model names an Ollama server at ``host`` lists, or [] when none answers in time."""
    import urllib.request  # only when probing: it pulls in http.client, email and ssl (~30 ms)

    base = host if host.startswith(("http://", "https://")) else f"http://{host}"
    # No proxies: the probe is for this machine only, and must not wait on a proxy.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{base.rstrip('/')}/api/tags", timeout=timeout) as response:
            body = json.loads(response.read(1_000_000))
    except (OSError, ValueError):  # URLError is an OSError
        return []
    entries = body.get("models") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return []
    names = [e.get("name") or e.get("model") for e in entries if isinstance(e, dict)]
    return [n for n in names if isinstance(n, str) and n]


def pick_ollama_model(names: Sequence[str]) -> str:
    """The first name matching ``OLLAMA_PREFERENCE``, else the first listed (no embeddings)."""
    usable = [n for n in names if "embed" not in n.lower()] or list(names)
    for family in OLLAMA_PREFERENCE:
        for name in usable:
            if name.lower().startswith(family):
                return name
    return usable[0]
