"""Which engine runs a local model: xllamacpp's prebuilt llama.cpp, or llama-cpp-python's build.

``reactloop[local]`` installs xllamacpp: a wheel with llama.cpp compiled for x86-64 with AVX2
(and for ARM64), so the first install takes a minute, not ten. llama-cpp-python compiles
llama.cpp on the machine, for its own CPU: the fallback for x86 CPUs without AVX2 (where the
prebuilt code would die of SIGILL) and for those who have it installed and ask for it.
``auto`` takes xllamacpp where it is installed and can run, else llama-cpp-python;
``$REACTLOOP_LOCAL_ENGINE`` or the model option ``engine`` names one.
"""

from __future__ import annotations

import importlib.util
import os
import platform
from pathlib import Path

from reactloop.errors import MissingDependency, UsageError
from reactloop.models.local.catalog import LOCAL_EXTRA_HINT
from reactloop.models.local.cpu import X86_MACHINES, read_cpu_flags

ENGINES = ("auto", "xllamacpp", "llama-cpp-python")
MODULES = {"xllamacpp": "xllamacpp", "llama-cpp-python": "llama_cpp"}
PREBUILT_NEEDS = frozenset({"avx2", "fma", "f16c", "bmi2"})  # what xllamacpp's x86 code uses


def requested_engine(value: str | None = None) -> str:
    """The engine asked for: ``value``, else ``$REACTLOOP_LOCAL_ENGINE``, else ``auto``."""
    raw = value if value is not None else os.environ.get("REACTLOOP_LOCAL_ENGINE", "")
    name = raw.strip().lower() or "auto"
    if name not in ENGINES:
        raise UsageError(f"the local engine must be one of {', '.join(ENGINES)}, not {raw!r}")
    return name


def installed(engine: str) -> bool:
    return importlib.util.find_spec(MODULES[engine]) is not None


def prebuilt_runs_here(cpuinfo: Path | None = None, machine: str | None = None) -> bool | None:
    """Whether xllamacpp's code runs on this CPU; None when its flags cannot be read."""
    if (platform.machine() if machine is None else machine).lower() not in X86_MACHINES:
        return True
    flags = read_cpu_flags(cpuinfo, machine=machine)
    return None if flags is None else flags >= PREBUILT_NEEDS


def choose_engine(requested: str) -> str:
    """The engine that will run: ``requested`` if named, else the best one installed here."""
    if requested != "auto":
        if not installed(requested):
            raise MissingDependency(f"the local engine {requested} is not installed: "
                                    f"pip install {requested}")  # fmt: skip
        return requested
    runs = prebuilt_runs_here()
    if installed("xllamacpp") and (runs or (runs is None and not installed("llama-cpp-python"))):
        return "xllamacpp"
    if installed("llama-cpp-python"):
        return "llama-cpp-python"
    if installed("xllamacpp"):
        missing = ", ".join(sorted(PREBUILT_NEEDS - (read_cpu_flags() or frozenset())))
        raise MissingDependency(
            f"this CPU lacks {missing}, which xllamacpp's prebuilt llama.cpp needs; build "
            "llama.cpp for it instead: pip install llama-cpp-python"
        )
    raise MissingDependency(f"local models need xllamacpp or llama-cpp-python: {LOCAL_EXTRA_HINT}")
