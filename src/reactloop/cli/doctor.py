"""``reactloop doctor``: what a run would use here, and whether each piece works on this machine.

It says which model ``run`` would choose and why; whether the embedded model loads and answers
on this CPU (in its own process, so a crash is a finding, not the end of the report), with the
CPU features llama.cpp was built for and uses; whether the bash sandbox works; and what to
install where something is missing. Exit 0 when a model is usable, 1 otherwise.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from importlib import metadata

import click

from reactloop.errors import ReactLoopError
from reactloop.models import resolve_model
from reactloop.models.base import ModelSettings
from reactloop.models.default import DEFAULT_EMBEDDED, choose_default_model
from reactloop.models.local import LocalLlamaModel
from reactloop.models.local.catalog import EMBEDDED, LOCAL_EXTRA_HINT, model_path
from reactloop.models.local.cpu import cpu_flags, features_line, has_amx
from reactloop.sandbox.bwrap import bwrap_status

PROBE = "The capital of France is"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _cpu() -> Check:
    flags = cpu_flags()
    amx = "AMX: yes (llama.cpp's AMX kernel is kept off)" if has_amx(flags) else "AMX: no"
    return Check("cpu", True, f"{platform.machine()} · {features_line(flags)} · {amx}")


def _weights() -> list[Check]:
    checks = []
    for name in EMBEDDED:
        try:
            checks.append(Check(f"weights {name}", True, str(model_path(name))))
        except ReactLoopError as exc:
            checks.append(Check(f"weights {name}", False, str(exc)))
    return checks


def _embedded_model() -> Check:
    version = _version("llama-cpp-python")
    if version is None:
        return Check("embedded model", False, f"llama-cpp-python is missing: {LOCAL_EXTRA_HINT}")
    try:
        model = resolve_model(f"local:{DEFAULT_EMBEDDED}", ModelSettings())
        assert isinstance(model, LocalLlamaModel)
        probe = model.process.probe(PROBE, 4)
    except ReactLoopError as exc:
        return Check("embedded model", False, f"llama-cpp-python {version}: {exc}")
    built = " ".join(
        part.split(":")[-1].split("=")[0].strip()
        for part in model.info["system_info"].split("|")
        if part.strip().endswith("= 1")
    )
    extra = "on" if model.info["use_extra_bufts"] else "off"
    return Check(
        "embedded model",
        True,
        f"{DEFAULT_EMBEDDED} loaded in {model.load_seconds:.1f} s, answered "
        f"{PROBE!r} → {probe['text'].strip()!r} in {probe['seconds']:.2f} s · "
        f"llama-cpp-python {version} built for: {built} · extra buffer types {extra}",
    )


def _sandbox() -> Check:
    works, detail = bwrap_status()
    return Check("bash sandbox", works, detail if works else detail + " (the weak mode is used)")


@click.command()
@click.option("--no-load", is_flag=True, help="Do not load the embedded model (faster).")
def doctor(no_load: bool) -> None:
    """Check this machine: the model run would use, the embedded model, the sandbox."""
    spec, reason = choose_default_model()
    click.echo(
        f"reactloop {_version('reactloop') or '?'} · Python {platform.python_version()} · "
        f"{platform.system()} {platform.release()}"
    )
    checks = [Check("model", True, f"run would use {spec}: {reason}"), _cpu(), *_weights()]
    if not no_load:
        checks.append(_embedded_model())
    checks.append(_sandbox())
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        click.echo(f"{mark} {check.name}: {check.detail}")
    uses_local = spec.startswith("local")
    usable = all(c.ok for c in checks if c.name == "embedded model") or not uses_local
    sys.exit(0 if usable else 1)
