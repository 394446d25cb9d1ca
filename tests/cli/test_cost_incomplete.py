"""``reactloop cost`` on a journal without its ``stop`` says the run was interrupted, as
``replay`` and ``view`` do; on a complete one it says nothing of the kind."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reactloop import Agent, Journal, ScriptedModel, tool
from reactloop.cli import main


@tool(read_only=True)
def look(q: str) -> str:
    """Look."""
    return "seen"


def journal(tmp_path: Path, *, complete: bool) -> Path:
    path = tmp_path / "run.jsonl"
    model = ScriptedModel([{"tool_calls": [{"name": "look", "arguments": {"q": "x"}}]}, "done"])
    with Journal(path) as written:
        Agent(model, [look], journal=written).run("q")
    if not complete:  # as a run killed before its stop leaves it
        lines = path.read_text().splitlines(keepends=True)
        assert json.loads(lines[-1])["type"] == "stop"
        path.write_text("".join(lines[:-1]))
    return path


def test_cost_says_an_interrupted_journal_is_incomplete(tmp_path: Path) -> None:
    path = journal(tmp_path, complete=False)
    result = CliRunner().invoke(main, ["cost", str(path)])
    assert result.exit_code == 0, result.output
    assert "no stop event: the run was interrupted" in " ".join(result.output.split())
    result = CliRunner().invoke(main, ["cost", str(path), "--json"])
    assert json.loads(result.output)["complete"] is False


def test_cost_of_a_complete_journal_says_nothing_of_the_kind(tmp_path: Path) -> None:
    path = journal(tmp_path, complete=True)
    result = CliRunner().invoke(main, ["cost", str(path)])
    assert result.exit_code == 0 and "interrupted" not in result.output
    result = CliRunner().invoke(main, ["cost", str(path), "--json"])
    assert json.loads(result.output)["complete"] is True
