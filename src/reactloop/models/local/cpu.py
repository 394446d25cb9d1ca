"""What this CPU offers llama.cpp, and the one switch that keeps it from crashing.

llama-cpp-python compiles llama.cpp for the CPU it is built on. On an Intel CPU with AMX
(``amx_tile amx_int8 amx_bf16``) its AMX matrix kernel is compiled in and chosen as an "extra
buffer type", and it crashes (SIGSEGV in ``ggml_backend_amx_mul_mat``). Loading the model with
``use_extra_bufts=False`` turns the AMX buffer type and the repacked CPU layouts off; the plain
CPU kernels then run, correctly, on every x86-64 CPU. Elsewhere the repacked layouts stay on.
See docs/local_models.md for the measurement behind the choice.
"""

from __future__ import annotations

import os
from pathlib import Path

AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "amx_bf16"})
# Features llama.cpp's CPU backend may use, as /proc/cpuinfo names them.
REPORTED_FEATURES = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx_vnni",
    *sorted(AMX_FLAGS),
)
SETTING_ENV = "REACTLOOP_LOCAL_EXTRA_BUFTS"  # auto | on | off


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The feature flags of the first CPU, or none where /proc/cpuinfo cannot be read."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def has_amx(flags: frozenset[str]) -> bool:
    return bool(flags & AMX_FLAGS)


def extra_buffer_types_allowed(
    setting: str = "auto", flags: frozenset[str] | None = None, *, built_with_amx: bool = False
) -> bool:
    """Whether to load with llama.cpp's extra buffer types: ``auto`` turns them off where AMX
    is in play, on this CPU or in the build (a wheel built on an AMX machine)."""
    chosen = (os.environ.get(SETTING_ENV, "").strip().lower() or setting).lower()
    if chosen in ("on", "true", "1"):
        return True
    if chosen in ("off", "false", "0"):
        return False
    return not (built_with_amx or has_amx(cpu_flags() if flags is None else flags))


def build_has_amx(system_info: str) -> bool:
    """Whether llama.cpp's ``llama_print_system_info()`` reports its AMX kernels compiled in."""
    return "AMX_INT8 = 1" in system_info


def features_line(flags: frozenset[str]) -> str:
    """The llama.cpp-relevant features of this CPU, in a fixed order: ``avx2 fma … amx_int8``."""
    present = [name for name in REPORTED_FEATURES if name in flags]
    return " ".join(present) or "(none reported)"
