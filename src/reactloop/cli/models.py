"""``reactloop models``: the providers of the roster and which are configured (whether a key is
set, never the key), the embedded models installed, the models the local servers of this
machine serve (Ollama, llama.cpp, vLLM, SGLang: each asked once, with a short timeout), and the
model the next run would pick and why (``models/default.py``'s own choice)."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import click

from reactloop.models.default import OLLAMA_DEFAULT_HOST, choose_default_model, ollama_models
from reactloop.models.local.catalog import EMBEDDED
from reactloop.models.roster import ROSTER, Provider

PROBE_TIMEOUT = 0.3  # seconds a local server has to answer; one on this machine answers faster
# Providers whose spec names a file, not a service.
FILE_PROVIDERS = {"scripted": "scripted:FILE.json", "replay": "replay:TRACE.jsonl"}


@dataclass(frozen=True)
class ProviderRow:
    name: str
    kind: str  # "api", "server", "embedded", "file"
    configured: bool
    detail: str
    served: tuple[str, ...] = ()  # a local server's models, when it answered


@dataclass(frozen=True)
class EmbeddedRow:
    spec: str
    installed: bool
    detail: str


@click.command("models")
@click.option(
    "--no-probe", is_flag=True, help="Ask no local server (Ollama, llama.cpp, …) what it serves."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def models(no_probe: bool, as_json: bool) -> None:
    """List the providers, which are configured, the models at hand, and the default.

    Configured: the provider's key variable is set (its value is never printed). The local
    servers of this machine (Ollama on $OLLAMA_HOST or localhost:11434, llama.cpp on :8080,
    vLLM on :8000, SGLang on :30000) are each asked what they serve, with a short timeout.
    The default is the model `reactloop run` would use without --model, and why. Exit 0, 2 on
    a usage error.
    """
    env = os.environ
    providers = [_provider(row, env, probe=not no_probe) for row in ROSTER.values()]
    embedded = [_embedded(name) for name in EMBEDDED]
    spec, reason = choose_default_model(env, probe_ollama=not no_probe)
    if as_json:
        report = {
            "providers": [asdict(row) for row in providers],
            "embedded": [asdict(row) for row in embedded],
            "default": {"model": spec, "reason": reason},
        }
        click.echo(json.dumps(report, ensure_ascii=False))
        return
    _print(providers, embedded, spec, reason)


def _provider(row: Provider, env: Mapping[str, str], *, probe: bool) -> ProviderRow:
    if row.name in FILE_PROVIDERS:
        return ProviderRow(row.name, "file", True, f"--model {FILE_PROVIDERS[row.name]}")
    if row.name == "local":
        installed = [name for name in EMBEDDED if _installed(name)]
        detail = f"installed: {', '.join(installed)}" if installed else "no model installed"
        return ProviderRow(row.name, "embedded", bool(installed), detail)
    if row.key_env is not None:
        return _api(row, row.key_env, env)
    return _server(row, env, probe=probe)


def _api(row: Provider, key_env: str, env: Mapping[str, str]) -> ProviderRow:
    key_set = bool(env.get(key_env, "").strip())
    url_set = bool(row.base_url_env and env.get(row.base_url_env, "").strip())
    said = [f"{key_env} is set" if key_set else f"{key_env} is not set"]
    if url_set:
        said.append(f"{row.base_url_env} is set")
    if row.default_model:
        said.append(f"default model {row.default_model}")
    return ProviderRow(row.name, "api", key_set or url_set, "; ".join(said))


def _server(row: Provider, env: Mapping[str, str], *, probe: bool) -> ProviderRow:
    if row.ollama_host:
        host = env.get("OLLAMA_HOST", "").strip() or OLLAMA_DEFAULT_HOST
        served = ollama_models(host, PROBE_TIMEOUT) if probe else []
        where = host
    else:
        where = row.default_base_url
        served = served_models(where) if probe else []
    if not probe:
        return ProviderRow(row.name, "server", False, f"{where}: not asked (--no-probe)")
    if not served:
        return ProviderRow(row.name, "server", False, f"{where}: no answer")
    detail = f"{where}: serves {len(served)} model{'s' if len(served) != 1 else ''}"
    return ProviderRow(row.name, "server", True, detail, tuple(served))


def served_models(base_url: str, timeout: float = PROBE_TIMEOUT) -> list[str]:
    """The model ids an OpenAI-compatible server lists at ``GET {base_url}/models``; [] when
    none answers in time, or with something else."""
    import urllib.request  # only when probing

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # this machine only
    try:
        with opener.open(f"{base_url.rstrip('/')}/models", timeout=timeout) as response:
            body: Any = json.loads(response.read(1_000_000))
    except (OSError, ValueError):  # URLError and timeouts are OSErrors
        return []
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return []
    ids = [entry.get("id") for entry in entries if isinstance(entry, dict)]
    return [name for name in ids if isinstance(name, str) and name]


def _installed(name: str) -> bool:
    """Whether the package carrying ``name`` is installed (found, not imported or assembled)."""
    return importlib.util.find_spec(EMBEDDED[name].module) is not None


def _embedded(name: str) -> EmbeddedRow:
    entry = EMBEDDED[name]
    if _installed(name):
        return EmbeddedRow(f"local:{name}", True, entry.description)
    return EmbeddedRow(f"local:{name}", False, f"{entry.description}; {entry.install}")


def _print(
    providers: list[ProviderRow], embedded: list[EmbeddedRow], spec: str, reason: str
) -> None:
    width = max(len(row.name) for row in providers)
    click.echo("providers:")
    for row in providers:
        mark = "yes" if row.configured else "no "
        click.echo(f"  {row.name:{width}}  {row.kind:8}  {mark}  {row.detail}")
    click.echo("embedded models:")
    for model in embedded:
        state = "installed    " if model.installed else "not installed"
        click.echo(f"  {model.spec:20}  {state}  {model.detail}")
    served = [(row.name, name) for row in providers for name in row.served]
    if served:
        click.echo("served on this machine:")
        for provider, name in served:
            click.echo(f"  {provider}:{name}")
    click.echo(f"default: {spec} ({reason})")
    missing = next((m for m in embedded if m.spec == spec and not m.installed), None)
    if missing is not None:
        click.echo(f"  not installed: {missing.detail.rpartition('; ')[2]}")
