"""``python -m reactloop.testing KIND``: a fake server in a process of its own, its URL the first
line of stdout, serving its script until SIGINT (Ctrl-C), then exit 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from reactloop.testing import free_port


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "reactloop.testing", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert process.stdout is not None
    url = process.stdout.readline().strip()  # printed once it listens
    assert url.startswith("http://127.0.0.1:"), process.communicate(timeout=30)
    return process, url


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def _interrupt(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    return err


def test_openai_serves_its_script_then_the_reply_until_ctrl_c(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    body = {"choices": [{"message": {"role": "assistant", "content": "from the body"}}]}
    script.write_text(json.dumps(["first", body]), encoding="utf-8")
    process, url = _start("openai", "--script", str(script), "--reply", "again")
    try:
        ask = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        texts = [
            _post(f"{url}/chat/completions", ask)["choices"][0]["message"]["content"]
            for _ in range(3)
        ]
        assert texts == ["first", "from the body", "again"]
    finally:
        err = _interrupt(process)
    assert "stopped after 3 requests" in err
    assert f"--model openai:any --base-url {url}" in err


@pytest.mark.parametrize(
    ("kind", "path", "ask"),
    [
        ("anthropic", "/v1/messages", {"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "hi"}]}),
        ("responses", "/responses", {"model": "m", "input": "hi"}),
    ],
)  # fmt: skip
def test_anthropic_and_responses_on_a_chosen_port(
    kind: str, path: str, ask: dict[str, Any]
) -> None:
    port = free_port()
    process, url = _start(kind, "--port", str(port))
    try:
        assert url.startswith(f"http://127.0.0.1:{port}")
        answer = json.dumps(_post(url + path, ask))
        assert "This is a fake reply." in answer  # the default reply without a script
    finally:
        _interrupt(process)


def test_a_bad_script_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"not": "a list"}', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reactloop.testing", "openai", "--script", str(script)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert "is not a JSON array of strings and objects" in done.stderr
