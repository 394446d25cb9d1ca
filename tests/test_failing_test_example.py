"""examples/failing_test: the scripted agent fixes the bug with real file and bash tools."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reactloop import Agent
from reactloop.journal.writer import iter_journal
from reactloop.models.scripted import ScriptedModel
from reactloop.sandbox.bwrap import bwrap_problem
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "failing_test"
SCRIPT = EXAMPLE / "script.json"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("script.json", "README.md"))
    return copy


def pytest_passes(folder: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return done.returncode == 0


def test_the_example_test_fails_before(project: Path) -> None:
    assert not pytest_passes(project)


def test_cli_run_makes_the_test_pass(project: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "run.jsonl"
    done = subprocess.run(
        [
            sys.executable, "-c", "from reactloop.cli import main; main()",
            "run", "Make the failing test pass",
            "--model", f"scripted:{SCRIPT}",
            "--workspace", str(project),
            "--tools", "files,bash",
            "--trace", str(trace),
            "--json",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["stop_reason"] == "final_answer"
    assert result["tool_calls"] == 5
    assert "pass" in result["answer"]
    assert pytest_passes(project)
    results = [event["result"] for event in iter_journal(trace) if event["type"] == "tool_result"]
    bash_outputs = [r["output"] for r in results if r["name"] == "bash"]
    assert [o["exit_code"] for o in bash_outputs] == [1, 0]
    expected = "bwrap" if bwrap_problem() is None else bash_outputs[0]["sandbox"]
    assert {o["sandbox"] for o in bash_outputs} == {expected}


def without_pytest(project: Path) -> None:
    """pytest missing, as the main set-up leaves it: a module in the workspace stands in for
    the missing package (``python -m`` looks there first)."""
    (project / "pytest.py").write_text(
        'import sys\nsys.exit("python: No module named pytest")\n', encoding="utf-8"
    )


def test_without_pytest_the_example_does_not_claim_success(project: Path, tmp_path: Path) -> None:
    # Without --verify: the script's answer expects the second test run to say "4 passed"; it
    # said "No module named pytest", so the run stops without an answer, exit 1, and says why.
    without_pytest(project)
    done = subprocess.run(
        [
            sys.executable, "-c", "from reactloop.cli import main; main()",
            "run", "Make the failing test pass",
            "--model", f"scripted:{SCRIPT}",
            "--workspace", str(project),
            "--tools", "files,bash",
            "--trace", str(tmp_path / "run.jsonl"),
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert "No answer (script turn 5 expects the last observation to contain '4 passed'" in (
        done.stderr
    )
    assert "No module named pytest" in done.stderr.split("No answer")[1]
    assert "all 4 tests pass" not in done.stderr


def test_without_pytest_the_scripted_answer_does_not_pass_verify(
    project: Path, tmp_path: Path
) -> None:
    # The README's command with pytest missing, and a script that answers whatever it saw
    # (the example's without its ``expects``): both test runs fail, the script still claims
    # "all 4 tests pass", and --verify (the same command) refuses that answer.
    without_pytest(project)
    turns = json.loads(SCRIPT.read_text(encoding="utf-8"))
    assert turns[-1].pop("expects") == "4 passed"
    blind = tmp_path / "blind.json"
    blind.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    done = subprocess.run(
        [
            sys.executable, "-c", "from reactloop.cli import main; main()",
            "run", "Make the failing test pass",
            "--model", f"scripted:{blind}",
            "--workspace", str(project),
            "--tools", "files,bash",
            "--verify", "python -m pytest -q",
            "--trace", str(trace),
            "--json",
        ],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    result = json.loads(done.stdout)
    assert result["stop_reason"] != "final_answer"
    assert not result["answer"]
    results = [event["result"] for event in iter_journal(trace) if event["type"] == "tool_result"]
    bash_outputs = [r["output"] for r in results if r["name"] == "bash"]
    assert [o["exit_code"] for o in bash_outputs] == [1, 1]
    assert "No module named pytest" in trace.read_text(encoding="utf-8")
    checks = [event for event in iter_journal(trace) if event["type"] == "check"]
    assert [(c["kind"], c["passed"]) for c in checks] == [("verify", False)]


def test_agent_in_weak_mode_makes_the_test_pass(project: Path) -> None:
    context = ToolContext(workspace=project, sandbox_mode="weak")
    tools = build_tools(("files", "bash"), context)
    result = Agent(ScriptedModel.from_file(SCRIPT), tools).run("Make the failing test pass")
    assert result.stop_reason == "final_answer", result.error
    assert pytest_passes(project)
