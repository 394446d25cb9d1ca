"""The OpenAI-compatible services (``SERVICES``): where each lives, its key, its quirks.

``resolve_endpoint`` turns a service, explicit settings and the environment into a base URL and
an API key, or raises ``UsageError`` naming the variable to set. Hosted services need a key
when they are reached at their official address; local servers need none. (The registry of
every ``--model`` prefix, OpenAI-compatible or not, is ``reactloop.models.SERVICES``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from reactloop.errors import UsageError

# The openai SDK refuses an empty key; local servers ignore whatever is sent.
PLACEHOLDER_KEY = "no-key-needed"


JsonSchemaMode = Literal["with_tools", "alone", ""]
OPENAI_HOST = "api.openai.com"


@dataclass(frozen=True, kw_only=True)
class Service:
    """One OpenAI-compatible service.

    ``key_env`` names the variable holding the API key (None: the service needs no key);
    ``base_url_env`` names a variable that overrides ``default_base_url``; ``ollama_host``
    says the base URL may also come from ``OLLAMA_HOST`` (``host:port``, no ``/v1``).
    ``json_schema`` says when a typed answer is asked for as a ``response_format`` JSON
    Schema: ``"with_tools"`` on every call (the reply is either tool calls or the answer),
    ``"alone"`` only on calls that may not call a tool (``tool_choice`` ``none``: servers
    that constrain the whole reply, tool calls included, by grammar), ``""`` never.
    """

    name: str
    default_base_url: str
    key_env: str | None = None
    base_url_env: str | None = None
    example_model: str = "MODEL"
    supports_tool_choice: bool = True
    echo_tool_name: bool = False
    max_tokens_field: str = "max_tokens"
    ollama_host: bool = False
    json_schema: JsonSchemaMode = ""

    @property
    def is_local(self) -> bool:
        return self.key_env is None


SERVICES: dict[str, Service] = {
    "openai": Service(
        name="openai",
        default_base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        example_model="gpt-4o-mini",
        max_tokens_field="max_completion_tokens",
        json_schema="with_tools",
    ),
    "deepseek": Service(
        name="deepseek",
        default_base_url="https://api.deepseek.com",
        key_env="DEEPSEEK_API_KEY",
        example_model="deepseek-chat",
    ),
    "qwen": Service(
        name="qwen",
        default_base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
        key_env="DASHSCOPE_API_KEY",
        example_model="qwen-plus",
    ),
    "ollama": Service(
        name="ollama",
        default_base_url="http://localhost:11434/v1",
        example_model="qwen3:8b",
        supports_tool_choice=False,
        echo_tool_name=True,
        ollama_host=True,
        json_schema="alone",
    ),
    "vllm": Service(
        name="vllm",
        default_base_url="http://localhost:8000/v1",
        example_model="Qwen/Qwen3-8B",
        echo_tool_name=True,
        json_schema="alone",
    ),
    "sglang": Service(
        name="sglang",
        default_base_url="http://localhost:30000/v1",
        example_model="Qwen/Qwen3-8B",
        echo_tool_name=True,
        json_schema="alone",
    ),
    "llamacpp": Service(
        name="llamacpp",
        default_base_url="http://localhost:8080/v1",
        example_model="default",
        echo_tool_name=True,
        json_schema="alone",
    ),
}


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
