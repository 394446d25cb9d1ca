"""Whether llama-cpp-python is installed and loads here, asked of a child process.

Importing ``llama_cpp`` loads llama.cpp's shared library: built for another CPU it can die of
SIGILL on the spot, and a half-installed wheel raises on import. ``reactloop doctor`` asks a
child process, so that either is a finding, not the end of the report, and it learns what the
library was built for (``llama_print_system_info()``) without loading a model.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

from reactloop.models.local.catalog import BROKEN_HINT, LOCAL_EXTRA_HINT
from reactloop.models.local.process import signal_hint, signal_name

IMPORT_TIMEOUT = 120.0  # seconds; a cold import on a busy machine takes a few
_PROBE = """
import json, llama_cpp
info = llama_cpp.llama_print_system_info()
params = llama_cpp.llama_model_default_params()
print(json.dumps({
    "system_info": info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info),
    "use_extra_bufts": hasattr(params, "use_extra_bufts"),
}))
"""


@dataclass(frozen=True, kw_only=True)
class LlamaCppStatus:
    """``problem`` None: it imports and is new enough; ``system_info`` is then what it reports."""

    version: str | None = None  # the installed distribution's version, None when not installed
    system_info: str = ""
    problem: str | None = None

    @property
    def installed(self) -> bool:
        return self.version is not None


def _version() -> str | None:
    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None


def llama_cpp_status(timeout: float = IMPORT_TIMEOUT) -> LlamaCppStatus:
    """Import ``llama_cpp`` in a child process and say whether it can run the local models."""
    version = _version()
    if version is None or importlib.util.find_spec("llama_cpp") is None:
        return LlamaCppStatus(problem=f"local models need llama-cpp-python: {LOCAL_EXTRA_HINT}")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        problem = f"importing llama_cpp took more than {timeout:.0f} s"
        return LlamaCppStatus(version=version, problem=problem)
    return _status(version, done)


def _status(version: str, done: subprocess.CompletedProcess[str]) -> LlamaCppStatus:
    lines = done.stdout.strip().splitlines()
    found: dict[str, object] = {}
    if done.returncode == 0 and lines:
        try:
            found = json.loads(lines[-1])
        except ValueError:
            found = {}
    problem = _problem(version, done, found)
    return LlamaCppStatus(version=version, system_info=str(found.get("system_info", "")),
                          problem=problem)  # fmt: skip


def _problem(
    version: str, done: subprocess.CompletedProcess[str], found: dict[str, object]
) -> str | None:
    if done.returncode < 0:
        signum = -done.returncode
        return f"importing llama_cpp died with {signal_name(signum)}{signal_hint(signum)}"
    if "system_info" not in found:
        said = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [""])[-1]
        if "No module named 'llama_cpp'" in said:
            return f"local models need llama-cpp-python: {LOCAL_EXTRA_HINT}"
        return f"llama-cpp-python {version} {BROKEN_HINT}: {said[:300] or 'no output'}"
    if not found.get("use_extra_bufts"):
        return (
            f"llama-cpp-python {version} is too old to turn off llama.cpp's extra buffer "
            f"types: pip install -U 'llama-cpp-python>=0.3.16' (or {LOCAL_EXTRA_HINT})"
        )
    return None
