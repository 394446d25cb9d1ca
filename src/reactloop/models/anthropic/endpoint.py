"""Where the Messages API lives and the key it takes: settings first, then the environment.

``resolve_endpoint`` gives a base URL and an API key or raises ``UsageError`` in one line.
Anthropic's own API needs ``ANTHROPIC_API_KEY``; a compatible gateway or a local server
(``--base-url``, or ``ANTHROPIC_BASE_URL``) may need none. The SDK adds ``/v1/messages`` to the
base URL, so a base URL given with ``/v1`` (as for OpenAI-compatible servers) loses it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from reactloop.errors import UsageError
from reactloop.models.roster import ROSTER

_ROW = ROSTER["anthropic"]
DEFAULT_BASE_URL = _ROW.default_base_url
EXAMPLE_MODEL = _ROW.example_model
KEY_ENV = _ROW.key_env or "ANTHROPIC_API_KEY"
BASE_URL_ENV = _ROW.base_url_env or "ANTHROPIC_BASE_URL"
PLACEHOLDER_KEY = "no-key-needed"  # the SDK refuses no key; servers that need none ignore it


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    base_url: str
    api_key: str


def resolve_endpoint(
    *, base_url: str | None, api_key: str | None, env: Mapping[str, str] | None = None
) -> Endpoint:
    environ = os.environ if env is None else env
    url = normal_base_url(base_url or environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL)
    key = api_key or environ.get(KEY_ENV) or ""
    if not key and is_official(url):
        raise UsageError(
            f"anthropic needs an API key: set {KEY_ENV} "
            "(or --base-url for a compatible server that needs none)"
        )
    return Endpoint(base_url=url, api_key=key or PLACEHOLDER_KEY)


def normal_base_url(url: str) -> str:
    """``http://host:8080/v1/`` as ``http://host:8080``: the SDK adds ``/v1/messages``."""
    return url.strip().rstrip("/").removesuffix("/v1")


def is_official(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host == "anthropic.com" or host.endswith(".anthropic.com")
