"""The adapters share one TLS context per process (building one costs ~17 ms of CPU), and it
still verifies certificates and host names."""

from __future__ import annotations

import importlib
import ssl

from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.models.tls import shared_tls_context


def _context_of(model: object) -> object:
    client = model.line.client  # type: ignore[attr-defined]
    return client._client._transport._pool._ssl_context


def test_one_context_verifies_certificates_and_host_names() -> None:
    httpx2 = importlib.import_module("httpx2")
    context = shared_tls_context(httpx2)
    assert context is shared_tls_context(httpx2)
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname is True


def test_every_adapter_uses_the_shared_context() -> None:
    httpx2 = importlib.import_module("httpx2")
    models = [
        OpenAIChatModel(model="a", base_url="https://127.0.0.1:9/v1"),
        OpenAIChatModel(model="b", base_url="https://127.0.0.1:9/v1"),
        OpenAIResponsesModel(model="r", base_url="https://127.0.0.1:9/v1"),
        AnthropicModel(model="c", base_url="https://127.0.0.1:9"),
    ]
    assert all(_context_of(m) is shared_tls_context(httpx2) for m in models)
