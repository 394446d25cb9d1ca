"""The engine that runs a local model: llama.cpp prebuilt by xllamacpp, and whether it can run.

``reactloop[local]`` installs xllamacpp: a wheel with llama.cpp compiled for x86-64 with AVX2
(and for ARM64), so installing compiles nothing. On an x86 CPU without AVX2 (over ten years old)
its code would die of SIGILL, so that CPU gets one line instead; any llama-server built for it
can still be used with ``--model llamacpp:NAME --base-url …``. llama-cpp-python, the engine
compiled on the machine, was removed (docs/local_models.md); ``engine`` names ``auto`` or
``xllamacpp`` (``$REACTLOOP_LOCAL_ENGINE``, the model option ``engine``).
"""

from __future__ import annotations

import importlib.util
import os
import platform
from pathlib import Path

from reactloop.errors import MissingDependency, UsageError
from reactloop.models.local.catalog import LOCAL_EXTRA_HINT
from reactloop.models.local.cpu import X86_MACHINES, read_cpu_flags

ENGINES = ("auto", "xllamacpp")
ENGINE = "xllamacpp"
PREBUILT_NEEDS = frozenset({"avx2", "fma", "f16c", "bmi2"})  # what xllamacpp's x86 code uses
LLAMACPP_SERVER_HINT = (
    "run a llama-server built for this CPU and use --model llamacpp:NAME --base-url URL"
)


def requested_engine(value: str | None = None) -> str:
    """The engine asked for: ``value``, else ``$REACTLOOP_LOCAL_ENGINE``, else ``auto``."""
    raw = value if value is not None else os.environ.get("REACTLOOP_LOCAL_ENGINE", "")
    name = raw.strip().lower() or "auto"
    if name == "llama-cpp-python":
        raise UsageError(
            "the llama-cpp-python engine was removed (it compiled llama.cpp); the local models "
            f"run on xllamacpp, or {LLAMACPP_SERVER_HINT}"
        )
    if name not in ENGINES:
        raise UsageError(f"the local engine must be one of {', '.join(ENGINES)}, not {raw!r}")
    return name


def installed() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None


def prebuilt_runs_here(cpuinfo: Path | None = None, machine: str | None = None) -> bool | None:
    """Whether xllamacpp's code runs on this CPU; None when its flags cannot be read."""
    if (platform.machine() if machine is None else machine).lower() not in X86_MACHINES:
        return True
    flags = read_cpu_flags(cpuinfo, machine=machine)
    return None if flags is None else flags >= PREBUILT_NEEDS


def choose_engine(requested: str) -> str:
    """The engine that will run (always xllamacpp), or why it cannot run here."""
    del requested  # "auto" and "xllamacpp" name the same engine
    if not installed():
        raise MissingDependency(f"local models need xllamacpp: {LOCAL_EXTRA_HINT}")
    if prebuilt_runs_here() is False:
        missing = ", ".join(sorted(PREBUILT_NEEDS - (read_cpu_flags() or frozenset())))
        raise MissingDependency(
            f"this CPU lacks {missing}, which xllamacpp's prebuilt llama.cpp needs; "
            f"{LLAMACPP_SERVER_HINT}"
        )
    return ENGINE
