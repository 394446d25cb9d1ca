"""The adapters share one TLS context per process (building one costs ~17 ms of CPU), and it
still verifies certificates and host names."""

from __future__ import annotations

import importlib
import ssl
import threading
from typing import Any

import pytest

from reactloop.models import tls
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


def test_threads_that_make_their_first_adapters_at_once_make_one_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An eval's worker starts hundreds of episodes at once: each thread that found no context
    made its own (here 32 threads made 32; 128 made 128, 7 s of CPU). They wait for the
    first instead."""
    httpx2 = importlib.import_module("httpx2")
    made: list[ssl.SSLContext] = []
    original = httpx2.create_ssl_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        context: ssl.SSLContext = original(*args, **kwargs)
        made.append(context)
        return context

    monkeypatch.setattr(tls, "_made", {})  # a process that has made none yet
    monkeypatch.setattr(httpx2, "create_ssl_context", counted)
    start = threading.Barrier(32)
    contexts: list[object] = []

    def first_adapter() -> None:
        start.wait()
        contexts.append(_context_of(OpenAIChatModel(model="a", base_url="https://127.0.0.1:9/v1")))

    threads = [threading.Thread(target=first_adapter) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1
    assert len(contexts) == 32 and all(context is made[0] for context in contexts)
