"""Whether the local engine (``engines.py``) is installed and loads here, asked of a child.

Importing ``xllamacpp`` loads llama.cpp's native code: on a CPU it was not built for it can
die of SIGILL on the spot, and a half-installed wheel (or a missing libgomp) raises on import.
``reactloop doctor`` asks a child process, so that either is a finding, not the end of the
report, and it learns what llama.cpp was built for (its system info) without loading a model.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

from reactloop.errors import MissingDependency, UsageError
from reactloop.models.local.catalog import LOCAL_EXTRA_HINT
from reactloop.models.local.engines import ENGINE, choose_engine, requested_engine
from reactloop.models.local.process import signal_hint, signal_name

IMPORT_TIMEOUT = 120.0  # seconds; a cold import on a busy machine takes a few
_PROBE = """
import json, xllamacpp
print(json.dumps({"system_info": xllamacpp.get_system_info()}))
"""
BROKEN_HINT = "is installed but cannot be loaded (pip install --force-reinstall xllamacpp)"


@dataclass(frozen=True, kw_only=True)
class EngineStatus:
    """``problem`` None: it imports and is new enough; ``system_info`` is then what it reports."""

    engine: str = ENGINE  # the engine a local model would run on
    version: str | None = None  # the installed distribution's version, None when not installed
    system_info: str = ""
    problem: str | None = None

    @property
    def installed(self) -> bool:
        return self.version is not None


def _version(engine: str) -> str | None:
    try:
        return metadata.version(engine)
    except metadata.PackageNotFoundError:
        return None


def engine_status(timeout: float = IMPORT_TIMEOUT) -> EngineStatus:
    """Import the engine in a child process and say whether it can run the local models."""
    try:
        engine = choose_engine(requested_engine())
    except (MissingDependency, UsageError) as exc:
        return EngineStatus(problem=str(exc))
    version = _version(engine)
    if version is None or importlib.util.find_spec(engine) is None:
        problem = f"local models need {engine}: {LOCAL_EXTRA_HINT}"
        return EngineStatus(engine=engine, problem=problem)
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
        problem = f"importing {engine} took more than {timeout:.0f} s"
        return EngineStatus(engine=engine, version=version, problem=problem)
    return _status(engine, version, done)


def _status(engine: str, version: str, done: subprocess.CompletedProcess[str]) -> EngineStatus:
    lines = done.stdout.strip().splitlines()
    found: dict[str, object] = {}
    if done.returncode == 0 and lines:
        try:
            found = json.loads(lines[-1])
        except ValueError:
            found = {}
    problem = _problem(engine, version, done, found)
    return EngineStatus(engine=engine, version=version,
                        system_info=str(found.get("system_info", "")), problem=problem)  # fmt: skip


def _problem(
    engine: str, version: str, done: subprocess.CompletedProcess[str], found: dict[str, object]
) -> str | None:
    module = engine
    if done.returncode < 0:
        signum = -done.returncode
        return f"importing {module} died with {signal_name(signum)}{signal_hint(signum)}"
    if "system_info" not in found:
        said = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or [""])[-1]
        if f"No module named '{module}'" in said:
            return f"local models need {engine}: {LOCAL_EXTRA_HINT}"
        return f"{engine} {version} {BROKEN_HINT}: {said[:300] or 'no output'}"
    return None
