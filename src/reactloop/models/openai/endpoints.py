"""The OpenAI-compatible services (``SERVICES``, the roster's rows for this adapter: where
each lives, its key, its quirks).

``resolve_endpoint`` turns a service, explicit settings and the environment into a base URL and
an API key, or raises ``UsageError`` naming the variable to set. Hosted services need a key
when they are reached at their official address; local servers need none. (The registry of
every ``--model`` prefix, OpenAI-compatible or not, is ``reactloop.models.roster``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import urlsplit

from reactloop.errors import UsageError
from reactloop.models.roster import OPENAI_ADAPTER, ROSTER, Provider

# The openai SDK refuses an empty key; local servers ignore whatever is sent.
PLACEHOLDER_KEY = "no-key-needed"


OPENAI_HOST = "api.openai.com"
Service = Provider  # an OpenAI-compatible row of the roster
SERVICES: Mapping[str, Service] = MappingProxyType(
    {name: row for name, row in ROSTER.items() if row.adapter == OPENAI_ADAPTER}
)


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    base_url: str
    api_key: str
    service: Service


def get_service(name: str) -> Service:
    service = SERVICES.get(name)
    if service is None:
        known = ", ".join(sorted(SERVICES))
        raise UsageError(f"{name!r} is not an OpenAI-compatible provider; known: {known}")
    return service


def resolve_endpoint(
    service: Service,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """The base URL and key to use: explicit settings first, then the environment."""
    env = os.environ if environ is None else environ
    url = (base_url or _base_url_from_env(service, env) or service.default_base_url).rstrip("/")
    _check_url(url, service)
    key = api_key or (env.get(service.key_env) if service.key_env else None)
    if not key:
        if service.key_env and _is_official(url, service):
            raise UsageError(
                f"{service.name} needs an API key: set {service.key_env} "
                f"(or pass --base-url for a server that needs none)"
            )
        key = PLACEHOLDER_KEY
    return Endpoint(base_url=url, api_key=key, service=service)


def _base_url_from_env(service: Service, env: Mapping[str, str]) -> str | None:
    if service.base_url_env and env.get(service.base_url_env):
        return env[service.base_url_env]
    host = env.get("OLLAMA_HOST", "").strip() if service.ollama_host else ""
    if not host:
        return None
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/") + "/v1"


def _check_url(url: str, service: Service) -> None:
    try:
        parts = urlsplit(url)
        port = parts.port  # a port that is no number, or out of range, raises here
        fine = parts.scheme in ("http", "https") and bool(parts.hostname) and port != 0
    except ValueError:  # e.g. an unclosed IPv6 bracket
        fine = False
    if not fine:
        raise UsageError(
            f"invalid base URL {url!r} for {service.name}: "
            f"expected http(s)://HOST[:PORT]/PATH, e.g. {service.default_base_url}"
        )


def _is_official(url: str, service: Service) -> bool:
    return urlsplit(url).netloc == urlsplit(service.default_base_url).netloc
