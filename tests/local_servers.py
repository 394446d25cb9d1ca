"""Real model servers for the slow tests: started on a free loopback port, waited for, stopped.

``running_server`` runs a command, polls a URL until it answers 200 (failing with the tail of
the server's log when the process dies or the deadline passes) and stops the process after;
``llama_server`` is llama.cpp's own llama-server from the prebuilt xllamacpp wheel
(``llama_server_main.py``); ``smollm2_gguf`` is SmolLM2's GGUF file as ``reactloop pull``
fetched it; ``missing`` skips a test, or fails it when the environment variable named says the
server must be there (CI sets them). Imported as ``local_servers`` (``tests/`` is on
``sys.path`` through its ``conftest.py``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

from reactloop.errors import MissingDependency
from reactloop.testing import free_port

STARTUP_SECONDS = 180.0
SERVER_MAIN = Path(__file__).with_name("llama_server_main.py")


def missing(why: str, *, required_by: str) -> NoReturn:
    """Skip for ``why``; fail instead when ``$required_by`` is ``1``."""
    if os.environ.get(required_by) == "1":
        pytest.fail(why)
    pytest.skip(why)


def smollm2_gguf(*, required_by: str) -> Path:
    """SmolLM2's GGUF file, fetched beforehand (``reactloop pull``): tests never fetch."""
    from reactloop.models.local.catalog import model_path

    try:
        return model_path("smollm2-135m", fetch_missing=False)
    except MissingDependency as exc:
        missing(f"{exc} (before the tests)", required_by=required_by)


@contextmanager
def llama_server(
    log_dir: Path,
    *,
    required_by: str,
    options: Sequence[str] = (),
) -> Iterator[str]:
    """llama-server (prebuilt, ``llama_server_main.py``) serving SmolLM2 until the block ends;
    yields its URL. ``options`` are the script's own (``--ctx``, ``--chat-template-file``…)."""
    if importlib.util.find_spec("xllamacpp") is None:
        missing("xllamacpp is not installed (pip install -e '.[local]')", required_by=required_by)
    model = smollm2_gguf(required_by=required_by)
    port = free_port()
    command = [sys.executable, str(SERVER_MAIN), "--model", str(model), "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    with running_server(
        [*command, *options], ready_url=f"{url}/health", name="llama-server", log_dir=log_dir
    ):
        yield url


@contextmanager
def running_server(
    command: Sequence[str],
    *,
    ready_url: str,
    name: str,
    log_dir: Path,
    startup_seconds: float = STARTUP_SECONDS,
) -> Iterator[Path]:
    """Run ``command`` until the block ends, once ``ready_url`` answers 200; yields its log."""
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(list(command), stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_ready(process, ready_url, log_path, name, startup_seconds)
        yield log_path
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _wait_until_ready(
    process: subprocess.Popen[bytes], url: str, log_path: Path, name: str, seconds: float
) -> None:
    """Poll ``url`` until it answers 200, the process dies, or the deadline passes."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            pytest.fail(f"{name} exited with {process.returncode}:\n{tail}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        try:
            process.wait(timeout=0.5)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
    tail = log_path.read_text(errors="replace")[-2000:]
    pytest.fail(f"{name} did not answer {url} within {seconds:.0f}s:\n{tail}")


def chat_template(example: str) -> str:
    """A Hermes-style chat template for SmolLM2 on ``llama_server``: the tools in the system
    prompt, with ``example`` (a worked exchange) after them, each result as a user line."""
    EXAMPLE = example
    return (
        "{%- if tools %}{{- '<|im_start|>system\\n' }}"
        "{%- if messages[0].role == 'system' %}{{- messages[0].content }}{%- endif %}"
        "{{- '\\n\\n# Tools\\n\\nYou are provided with function signatures within <tools></tools>"
        " XML tags:\\n<tools>' }}{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}"
        "{%- endfor %}{{- '\\n</tools>\\n\\nFor each function call, return a json object with"
        " function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n'
        f"{EXAMPLE}' }}}}"
        "{%- elif messages[0].role == 'system' %}"
        "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}{%- endif %}"
        "{%- for message in messages %}"
        "{%- if message.role == 'user' or "
        "(message.role == 'assistant' and not message.tool_calls) %}"
        "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
        "{%- elif message.role == 'assistant' %}{{- '<|im_start|>assistant' }}"
        "{%- for tool_call in message.tool_calls %}"
        "{%- if tool_call.function is defined %}"
        "{%- set tool_call = tool_call.function %}{%- endif %}"
        '{{- \'\\n<tool_call>\\n{"name": "\' + tool_call.name + \'", "arguments": \' }}'
        "{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}{%- endfor %}"
        "{{- '<|im_end|>\\n' }}"
        "{%- elif message.role == 'tool' %}{{- '<|im_start|>user\\nThe result was '"
        " + message.content + '. Make the next call of the task.<|im_end|>\\n' }}"
        "{%- endif %}{%- endfor %}"
        "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
    )
