"""What this CPU offers llama.cpp, and the one switch that keeps it from crashing.

A llama.cpp built on an Intel CPU with AMX (``amx_tile amx_int8 amx_bf16``) has its AMX
matrix kernel compiled in and chosen as an "extra buffer type", and it crashes (SIGSEGV in
``ggml_backend_amx_mul_mat``); the prebuilt engine reports in its system info whether its build
has it (``build_has_amx``). Loading the model with extra buffer types off turns the AMX buffer
type and the repacked CPU layouts off; the plain CPU kernels then run, correctly, on every
x86-64 CPU. Elsewhere the repacked layouts stay on. Where the CPU's flags cannot be read on
x86, AMX cannot be ruled out: they are off too.
See docs/local_models.md for the measurement behind the choice.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from reactloop.errors import UsageError

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
# What each setting forces; None leaves the choice to this CPU and build.
SETTINGS: dict[str, bool | None] = {
    "auto": None,
    "on": True,
    "true": True,
    "1": True,
    "off": False,
    "false": False,
    "0": False,
}
CPUINFO = Path("/proc/cpuinfo")
X86_MACHINES = frozenset({"x86_64", "amd64", "i386", "i686", "x86"})


def read_cpu_flags(
    cpuinfo: Path | None = None, *, machine: str | None = None
) -> frozenset[str] | None:
    """The feature flags of the first CPU, or None when they cannot be known: /proc/cpuinfo
    unreadable, or without a ``flags`` line on x86 (elsewhere there is none, and no AMX)."""
    x86 = (platform.machine() if machine is None else machine).lower() in X86_MACHINES
    try:
        text = (CPUINFO if cpuinfo is None else cpuinfo).read_text(errors="replace")
    except OSError:
        return None if x86 else frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None if x86 else frozenset()


def cpu_flags(cpuinfo: Path | None = None) -> frozenset[str]:
    """The feature flags of the first CPU, or none where they cannot be read."""
    return read_cpu_flags(cpuinfo) or frozenset()


def has_amx(flags: frozenset[str]) -> bool:
    return bool(flags & AMX_FLAGS)


def extra_buffer_types_choice(
    setting: str = "auto",
    flags: frozenset[str] | None = None,
    *,
    built_with_amx: bool = False,
    cpuinfo: Path | None = None,
    machine: str | None = None,
) -> tuple[bool, str]:
    """Whether to load with llama.cpp's extra buffer types, and why, in words for doctor.

    ``$REACTLOOP_LOCAL_EXTRA_BUFTS`` overrides ``setting``; ``auto`` turns them off where AMX is
    in play, on this CPU or in the build (a wheel built on an AMX machine), and where the CPU's
    flags cannot be read (fail safe). ``flags`` None: read them (``read_cpu_flags``)."""
    configured = os.environ.get(SETTING_ENV, "").strip().lower()
    chosen = configured or setting.strip().lower()
    if chosen not in SETTINGS:
        where = f"${SETTING_ENV}" if configured else "extra_buffer_types"
        raise UsageError(f"{where} must be auto, on or off, not {chosen!r}")
    source = f"{SETTING_ENV}={configured}" if configured else f"extra_buffer_types={chosen}"
    forced = SETTINGS[chosen]
    if forced is not None:
        return forced, f"{'on' if forced else 'off'} ({source})"
    known = read_cpu_flags(cpuinfo, machine=machine) if flags is None else flags
    if known is None:
        return False, "off (the CPU's flags cannot be read, so AMX cannot be ruled out)"
    if has_amx(known):
        return False, "off (this CPU has AMX, where llama.cpp's AMX kernel crashes)"
    if built_with_amx:
        return False, "off (this llama.cpp was built with its AMX kernel)"
    return True, "on (no AMX on this CPU or in the build)"


def extra_buffer_types_allowed(
    setting: str = "auto",
    flags: frozenset[str] | None = None,
    *,
    built_with_amx: bool = False,
    cpuinfo: Path | None = None,
    machine: str | None = None,
) -> bool:
    """Whether to load with llama.cpp's extra buffer types (see ``extra_buffer_types_choice``)."""
    allowed, _ = extra_buffer_types_choice(
        setting, flags, built_with_amx=built_with_amx, cpuinfo=cpuinfo, machine=machine
    )
    return allowed


def build_has_amx(system_info: str) -> bool:
    """Whether llama.cpp's ``llama_print_system_info()`` reports its AMX kernels compiled in."""
    return "AMX_INT8 = 1" in system_info


def features_line(flags: frozenset[str] | None) -> str:
    """The llama.cpp-relevant features of this CPU, in a fixed order: ``avx2 fma … amx_int8``."""
    if flags is None:
        return "(unknown: /proc/cpuinfo cannot be read)"
    present = [name for name in REPORTED_FEATURES if name in flags]
    return " ".join(present) or "(none reported)"
