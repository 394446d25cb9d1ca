"""choose_default_model: explicit configuration, then Ollama, then the embedded model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from reactloop.models.default import (
    DEFAULT_EMBEDDED,
    choose_default_model,
    ollama_models,
    pick_ollama_model,
)


class _FakeOllama(BaseHTTPRequestHandler):
    tags: object = {"models": []}

    def do_GET(self) -> None:
        if self.path != "/api/tags":
            self.send_error(404)
            return
        body = self.tags if isinstance(self.tags, bytes) else json.dumps(self.tags).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(tags: object) -> Iterator[str]:
    handler = type("Handler", (_FakeOllama,), {"tags": tags})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def ollama_host() -> Iterator[str]:
    tags = {
        "models": [
            {"name": "nomic-embed-text:latest"},
            {"name": "llama3.2:1b"},
            {"name": "qwen3:4b"},
        ]
    }
    yield from _serve(tags)


@pytest.fixture
def closed_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


def test_reactloop_model_wins_over_everything(ollama_host: str) -> None:
    env = {
        "REACTLOOP_MODEL": "anthropic:claude-x",
        "OPENAI_API_KEY": "k",
        "OLLAMA_HOST": ollama_host,
    }
    spec, reason = choose_default_model(env)
    assert spec == "anthropic:claude-x"
    assert "REACTLOOP_MODEL" in reason


ANTHROPIC_OR_NEXT = "anthropic:claude-haiku-4-5"  # an Anthropic key picks the Anthropic adapter


@pytest.mark.parametrize(
    ("env", "spec", "variable"),
    [
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "openai:gpt-4o-mini", "OPENAI_BASE_URL"),
        ({"OPENAI_API_KEY": "sk", "OPENAI_MODEL": "gpt-x"}, "openai:gpt-x", "OPENAI_API_KEY"),
        ({"ANTHROPIC_API_KEY": "a", "DEEPSEEK_API_KEY": "d"}, ANTHROPIC_OR_NEXT, "API_KEY"),
        ({"DEEPSEEK_API_KEY": "d"}, "deepseek:deepseek-chat", "DEEPSEEK_API_KEY"),
        ({"OPENAI_API_KEY": "sk", "DEEPSEEK_API_KEY": "d"}, "openai:gpt-4o-mini", "OPENAI_API_KEY"),
    ],
)
def test_configured_environment_comes_before_ollama(
    env: dict[str, str], spec: str, variable: str, ollama_host: str
) -> None:
    chosen, reason = choose_default_model({**env, "OLLAMA_HOST": ollama_host})
    assert chosen == spec
    assert variable in reason


def test_blank_keys_do_not_count(closed_port: str) -> None:
    spec, _ = choose_default_model({"OPENAI_API_KEY": "  ", "OLLAMA_HOST": closed_port})
    assert spec == f"local:{DEFAULT_EMBEDDED}"


def test_ollama_is_chosen_when_it_answers(ollama_host: str) -> None:
    spec, reason = choose_default_model({"OLLAMA_HOST": ollama_host})
    assert spec == "ollama:qwen3:4b"
    assert ollama_host in reason


def test_no_ollama_falls_back_to_the_embedded_model(closed_port: str) -> None:
    spec, reason = choose_default_model({"OLLAMA_HOST": closed_port})
    assert spec == f"local:{DEFAULT_EMBEDDED}"
    assert "embedded" in reason and "Ollama" in reason


def test_probe_can_be_switched_off(ollama_host: str) -> None:
    spec, reason = choose_default_model({"OLLAMA_HOST": ollama_host}, probe_ollama=False)
    assert spec == f"local:{DEFAULT_EMBEDDED}"
    assert "Ollama" not in reason


@pytest.mark.parametrize("tags", [b"not json", {"models": "x"}, ["a"], {"models": []}])
def test_a_broken_or_empty_ollama_is_skipped(tags: object) -> None:
    for host in _serve(tags):
        assert ollama_models(host) == []
        assert choose_default_model({"OLLAMA_HOST": host})[0].startswith("local:")


def test_ollama_host_may_be_a_url(ollama_host: str) -> None:
    assert "qwen3:4b" in ollama_models(f"http://{ollama_host}/")


def test_pick_prefers_tool_capable_families_and_skips_embeddings() -> None:
    assert pick_ollama_model(["nomic-embed-text", "phi3:mini", "llama3.1:8b"]) == "llama3.1:8b"
    assert pick_ollama_model(["nomic-embed-text", "phi3:mini"]) == "phi3:mini"
    assert pick_ollama_model(["nomic-embed-text"]) == "nomic-embed-text"


def test_the_default_embedded_model_is_in_the_catalog() -> None:
    from reactloop.models.local.catalog import EMBEDDED

    assert DEFAULT_EMBEDDED in EMBEDDED
