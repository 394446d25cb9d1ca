"""Tests write only under temporary folders: a run without ``--trace`` started from the
checkout, in a process of its own, journals into the test's ``$REACTLOOP_RUNS_DIR`` (the
autouse ``runs_dir`` fixture of ``tests/conftest.py``), never into the checkout's ``runs/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import CHECKOUT_RUNS, new_in_checkout_runs


def test_a_run_from_the_checkout_journals_into_the_temporary_runs_folder(
    tmp_path: Path, runs_dir: Path
) -> None:
    assert os.environ["REACTLOOP_RUNS_DIR"] == str(runs_dir)
    assert not runs_dir.is_relative_to(CHECKOUT_RUNS.parent)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["Thought: done.\nAction: Finish[5]"]), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "q", "--model", f"scripted:{script}", "--json"],
        cwd=CHECKOUT_RUNS.parent, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    trace = Path(json.loads(done.stdout)["trace"])
    assert trace.parent == runs_dir and trace.exists()
    assert new_in_checkout_runs() == set()
