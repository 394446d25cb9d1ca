"""``reactloop doctor``: each line tells the truth, and any FAIL exits 1.

``doctor --no-load`` runs for real, as a command, with the environment a user would have. A
broken or missing engine is a real package named ``xllamacpp``, written in a temporary folder
put first on PYTHONPATH, that fails on import the way the real one does.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reactloop.cli import main
from reactloop.models.local import cpu
from reactloop.models.local.cpu import SETTING_ENV, build_has_amx, has_amx, read_cpu_flags
from reactloop.models.local.install import engine_status

SRC = Path(__file__).resolve().parents[2] / "src"
KEYS = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY")
BROKEN_LIBRARY = "raise OSError('libgomp.so.1: cannot open shared object file')\n"
NOT_INSTALLED = "raise ModuleNotFoundError(\"No module named 'xllamacpp'\", name='xllamacpp')\n"


def _doctor(
    *,
    model: str = "local:smollm2-135m",
    shadow: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, dict[str, str]]:
    """Exit code and {check name: its whole line} of ``reactloop doctor --no-load``."""
    paths = [str(shadow)] if shadow is not None else []
    environment = {k: v for k, v in os.environ.items() if k not in KEYS and k != SETTING_ENV}
    environment |= {"REACTLOOP_MODEL": model, **(env or {})}
    environment["PYTHONPATH"] = os.pathsep.join([*paths, str(SRC)])
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "doctor", "--no-load"],
        capture_output=True, text=True, env=environment, timeout=240, check=False,
    )  # fmt: skip
    lines = {}
    for line in done.stdout.splitlines()[1:]:
        name = line[5:].partition(":")[0]
        lines[name] = line
    return done.returncode, lines


def _fake_engine(tmp_path: Path, body: str, name: str = "xllamacpp") -> Path:
    package = tmp_path / "shadow" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(body)
    return package.parent


def _needs_engine() -> None:
    if engine_status().problem is not None and os.environ.get("REACTLOOP_REQUIRE_SLOW") != "1":
        pytest.skip("needs the local extra (xllamacpp)")


def test_forcing_the_extra_buffer_types_on_is_reported_as_on() -> None:
    _needs_engine()
    code, lines = _doctor(env={SETTING_ENV: "on"})
    line = lines["cpu"]
    assert f"on ({SETTING_ENV}=on)" in line and "kept off" not in line
    # On an AMX CPU (or an AMX build) that is the crash: FAIL, and doctor exits 1. Elsewhere it
    # is a fine choice, and the same test checks that it stays ok.
    flags = read_cpu_flags()
    amx = flags is None or has_amx(flags) or build_has_amx(engine_status().system_info)
    assert line.startswith("FAIL cpu:" if amx else "ok   cpu:")
    if amx:
        assert code == 1


def test_the_default_cpu_line_says_why_the_extra_buffer_types_are_on_or_off() -> None:
    _needs_engine()
    _, lines = _doctor()
    line = lines["cpu"]
    flags = read_cpu_flags()
    if flags is not None and has_amx(flags):
        assert "AMX: yes" in line and "off (this CPU has AMX" in line
    else:  # an AMD or Intel CPU without AMX: on, unless the build has the AMX kernel
        assert "AMX: no" in line and ("on (no AMX" in line or "built with its AMX" in line)


def test_an_unreadable_cpuinfo_is_reported_and_keeps_them_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu, "CPUINFO", tmp_path / "no-cpuinfo")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setenv("REACTLOOP_MODEL", "scripted:script.json")
    monkeypatch.delenv(SETTING_ENV, raising=False)
    result = CliRunner().invoke(main, ["doctor", "--no-load"])
    (line,) = [line for line in result.stdout.splitlines() if " cpu: " in line]
    assert "AMX: unknown" in line and "/proc/cpuinfo cannot be read" in line
    assert "off (the CPU's flags cannot be read" in line


def test_a_missing_model_file_is_a_fail_and_exits_1(tmp_path: Path) -> None:
    code, lines = _doctor(model=f"local:{tmp_path / 'absent.gguf'}")
    assert lines["model"].startswith("FAIL model: run would use local:")
    assert "model file not found" in lines["model"]
    assert code == 1


def test_an_engine_that_does_not_import_is_a_fail_on_the_model_line(tmp_path: Path) -> None:
    _needs_engine()
    code, lines = _doctor(shadow=_fake_engine(tmp_path, NOT_INSTALLED))
    assert lines["model"].startswith("FAIL model:")
    assert "local models need xllamacpp" in lines["model"]
    assert code == 1


@pytest.mark.parametrize("engine", ["auto", "xllamacpp"])
def test_the_model_line_names_the_engine_a_local_run_would_use(engine: str) -> None:
    _needs_engine()
    _, lines = _doctor(env={"REACTLOOP_LOCAL_ENGINE": engine})
    assert lines["model"].startswith("ok   model: run would use local:smollm2-135m")
    assert " · engine xllamacpp " in lines["model"]


def test_the_removed_compiled_engine_is_a_fail_that_names_what_to_do() -> None:
    code, lines = _doctor(env={"REACTLOOP_LOCAL_ENGINE": "llama-cpp-python"})
    assert lines["model"].startswith("FAIL model:")
    assert "llama-cpp-python engine was removed" in lines["model"]
    assert "--model llamacpp:NAME" in lines["model"]
    assert code == 1


def test_a_prebuilt_engine_that_does_not_load_is_a_fail_that_says_why(tmp_path: Path) -> None:
    _needs_engine()
    code, lines = _doctor(shadow=_fake_engine(tmp_path, BROKEN_LIBRARY))
    assert lines["model"].startswith("FAIL model: run would use local:smollm2-135m")
    assert "xllamacpp" in lines["model"] and "libgomp.so.1" in lines["model"]
    assert code == 1


def test_a_remote_model_is_ok_and_the_exit_code_follows_the_fail_lines() -> None:
    code, lines = _doctor(model="openai:gpt-4o-mini")
    assert lines["model"].startswith("ok   model: run would use openai:gpt-4o-mini")
    failing = [line for line in lines.values() if line.startswith("FAIL")]
    assert code == (1 if failing else 0)


def test_an_unknown_provider_is_a_fail() -> None:
    code, lines = _doctor(model="nosuch:model")
    assert lines["model"].startswith("FAIL model:")
    assert "no provider is called 'nosuch'" in lines["model"]
    assert code == 1


def test_run_reports_a_broken_engine_in_one_line(tmp_path: Path) -> None:
    shadow = _fake_engine(tmp_path, BROKEN_LIBRARY)
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(shadow), str(SRC)])
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "q", "--model", "local", "--no-trace"],
        capture_output=True, text=True, env=environment, timeout=240, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert "xllamacpp is installed but cannot be loaded" in done.stderr
    assert done.returncode != 0
