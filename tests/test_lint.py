"""The house rules that a tool can check, checked in CI: ruff's lint (including C901, each
function's complexity at most 10, ``pyproject.toml``), ruff's format, and ``mypy --strict``
over ``src``. The linters' versions are pinned in the ``dev`` extra, so that a new release's
new rule fails a change that asks for it, not an unrelated one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [
        ("ruff", "check", "src", "tests", "benchmarks"),
        ("ruff", "format", "--check", "src", "tests", "benchmarks"),
    ],
    ids=["ruff-check", "ruff-format"],
)
def test_ruff_is_clean(command: tuple[str, ...]) -> None:
    done = _run(*command)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    done = _run("mypy", "--cache-dir", str(tmp_path / "mypy"), "src")
    assert done.returncode == 0, done.stdout + done.stderr
