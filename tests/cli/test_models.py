"""``reactloop models``: the roster's providers, which are configured (never a key's value), the
embedded models, what a local server serves, and the default the next run would pick."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from helpers import invoke
from reactloop.cli.models import served_models
from reactloop.models.local.catalog import EMBEDDED
from reactloop.models.roster import ROSTER
from reactloop.testing import FakeOpenAIServer

SECRET = "sk-do-not-print-4242"


class _Tags(BaseHTTPRequestHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = json.dumps({"models": [{"name": "nomic-embed-text"}, {"name": "qwen3:8b"}]})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A fake Ollama on 127.0.0.1 (its /api/tags), named by $OLLAMA_HOST; no key is set."""
    for row in ROSTER.values():
        for variable in (row.key_env, row.base_url_env, row.model_env):
            if variable:
                monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("REACTLOOP_MODEL", raising=False)
    _Tags.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.server_address[1]}")
    try:
        yield _Tags.asked
    finally:
        server.shutdown()
        server.server_close()


def test_a_served_ollama_model_is_listed_and_becomes_the_default(ollama: list[str]) -> None:
    code, out, err = invoke("models", "--json")
    assert code == 0, err
    report = json.loads(out)
    rows = {row["name"]: row for row in report["providers"]}
    assert list(rows) == list(ROSTER)
    assert rows["ollama"]["configured"] is True
    assert rows["ollama"]["served"] == ["nomic-embed-text", "qwen3:8b"]
    assert rows["openai"]["configured"] is False
    assert rows["openai"]["detail"].startswith("OPENAI_API_KEY is not set")
    assert report["default"]["model"] == "ollama:qwen3:8b"  # models/default.py's choice
    assert "an Ollama server answers" in report["default"]["reason"]
    assert [m["spec"] for m in report["embedded"]] == [f"local:{name}" for name in EMBEDDED]
    assert "/api/tags" in ollama


def test_a_key_is_said_to_be_set_never_printed(ollama: list[str], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    code, out, _ = invoke("models")
    assert code == 0 and SECRET not in out
    lines = out.splitlines()
    anthropic = next(line for line in lines if line.split()[:1] == ["anthropic"])
    assert anthropic.split()[1:3] == ["api", "yes"] and "ANTHROPIC_API_KEY is set" in anthropic
    assert "served on this machine:" in lines and "  ollama:qwen3:8b" in lines
    assert lines[-1].startswith("default: anthropic:claude-haiku-4-5 (ANTHROPIC_API_KEY is set)")
    code, out, _ = invoke("models", "--json")
    assert SECRET not in out


def test_no_probe_asks_no_server(ollama: list[str]) -> None:
    code, out, _ = invoke("models", "--no-probe", "--json")
    assert code == 0 and ollama == []
    report = json.loads(out)
    ollama_row = next(row for row in report["providers"] if row["name"] == "ollama")
    assert ollama_row["detail"].endswith("not asked (--no-probe)")
    assert report["default"]["model"].startswith("local:")


def test_served_models_of_an_openai_compatible_server() -> None:
    with FakeOpenAIServer(model="default") as server:
        base_url = server.base_url
        assert served_models(base_url) == ["default"]
    assert served_models(base_url, timeout=0.2) == []  # stopped: nothing answers
