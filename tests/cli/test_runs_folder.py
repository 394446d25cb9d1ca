"""Tests write only under temporary folders: a run without ``--trace`` started from the
checkout, in a process of its own, journals into the test's ``$REACTLOOP_RUNS_DIR`` (the
autouse ``runs_dir`` fixture of ``tests/conftest.py``), never into the checkout's ``runs/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import CHECKOUT_RUNS, invoke, new_in_checkout_runs
from reactloop.cli import record_place


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


def test_without_runs_dir_the_journals_go_to_the_users_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not ``./runs``: the current folder is the default workspace, where ``bash`` writes."""
    monkeypatch.delenv("REACTLOOP_RUNS_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert record_place.runs_dir() == tmp_path / "state" / "reactloop" / "runs"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert record_place.runs_dir() == tmp_path / "home" / ".local" / "state" / "reactloop" / "runs"


@pytest.mark.parametrize("where", ["trace", "runs_dir"])
def test_a_journal_inside_a_workspace_the_tools_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["Thought: done.\nAction: Finish[5]"] * 2), encoding="utf-8")
    workspace = tmp_path / "ws"
    (workspace / "runs").mkdir(parents=True)
    trace = workspace / "runs" / "run.jsonl"
    common = ["--model", f"scripted:{script}", "--workspace", str(workspace)]
    if where == "trace":
        common += ["--trace", str(trace)]
    else:
        monkeypatch.setenv("REACTLOOP_RUNS_DIR", str(workspace / "runs"))
    code, _, err = invoke("run", "q", *common, "--tools", "files,bash")
    assert code == 2 and err.count("\n") == 1, err
    assert "would be inside the workspace" in err and "files and bash tools" in err
    assert list((workspace / "runs").iterdir()) == []
    code, _, err = invoke("run", "q", *common, "--tools", "files,bash", "--read-only")
    assert code == 0, err
    code, _, err = invoke("run", "q", *common, "--tools", "calculator")
    assert code == 0, err
