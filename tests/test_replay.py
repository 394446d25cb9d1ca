"""Replay: the recorded model turns re-drive the loop against the real tools; the report says
``identical`` or names the first divergence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import Agent, Journal, ModelRequest, ScriptedModel, tool
from reactloop.cli.trace import replay as replay_command
from reactloop.errors import JournalError, ModelError, UsageError
from reactloop.messages import ModelTurn
from reactloop.models import ModelSettings, resolve_model
from reactloop.replay import replay
from reactloop.replay.model import ReplayModel, from_spec
from reactloop.tools.registry import ToolContext, build_tools

NOTES = {"capital": "Paris", "population": 2_100_000}
TURNS: list[Any] = [
    {
        "content": "Look it up.",
        "tool_calls": [{"name": "lookup", "arguments": {"key": "population"}}],
    },
    {
        "tool_calls": [
            {"name": "calculator", "arguments": {"expression": "2100000 * 2"}},
            {"name": "lookup", "arguments": {"key": "capital"}},
        ]
    },
    {"content": "4200000 people would live in Paris."},
]


def recorded_run(tmp_path: Path, turns: list[Any] | None = None, **agent: Any) -> Path:
    """A real run, journaled the way ``reactloop run --tools calculator,lookup --notes`` does."""
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps(NOTES), encoding="utf-8")
    config = {"tools": ["calculator", "lookup"], "notes": str(notes), "read_only": False}
    tools = build_tools(("calculator", "lookup"), ToolContext(notes=notes))
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns or TURNS), tools, journal=journal, config=config, **agent).run(
            "Double the population of the capital."
        )
    return trace


def test_replay_of_an_unchanged_world_is_identical(tmp_path: Path) -> None:
    report = replay(recorded_run(tmp_path))
    assert report.identical and report.divergence is None
    assert report.compared == 3
    assert (
        report.result is not None and report.result.answer == "4200000 people would live in Paris."
    )
    assert report.describe().startswith("identical (3 tool results compared)")


def test_changed_notes_file_diverges_at_the_first_changed_result(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    changed = dict(NOTES, capital="Lyon")
    (tmp_path / "notes.json").write_text(json.dumps(changed), encoding="utf-8")
    report = replay(trace)
    assert not report.identical
    divergence = report.divergence
    assert divergence is not None
    assert (divergence.kind, divergence.step, divergence.tool) == ("tool_result", 2, "lookup")
    assert json.loads(divergence.arguments or "") == {"key": "capital"}
    assert divergence.expected == {"ok": True, "output": "Paris"}
    assert divergence.actual == {"ok": True, "output": "Lyon"}
    assert report.compared == 2
    assert "diverged at step 2, tool lookup" in report.describe()


def test_a_tool_that_now_fails_is_a_divergence(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    (tmp_path / "notes.json").write_text(json.dumps({"capital": "Paris"}), encoding="utf-8")
    divergence = replay(trace).divergence
    assert divergence is not None and divergence.step == 1
    assert divergence.actual["ok"] is False and "population" in divergence.actual["error"]


def test_given_tools_replace_the_recorded_ones(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)

    @tool(read_only=True)
    def lookup(key: str) -> str:
        """A different notes source.

        Args:
            key: the name of the note
        """
        return "2100000" if key == "population" else "Paris"

    calculator = build_tools(("calculator",), ToolContext())
    report = replay(trace, tools=[*calculator, lookup])
    assert report.divergence is not None
    assert report.divergence.expected == {"ok": True, "output": 2_100_000}
    assert report.divergence.actual == {"ok": True, "output": "2100000"}


def test_a_different_ending_is_a_stop_divergence(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    stop = json.loads(lines[-1])
    stop["answer"] = "something else"
    trace.write_text("".join(lines[:-1]) + json.dumps(stop) + "\n", encoding="utf-8")
    divergence = replay(trace).divergence
    assert divergence is not None and divergence.kind == "stop"
    assert divergence.expected["answer"] == "something else"


def test_declined_calls_are_declined_again(tmp_path: Path) -> None:
    @tool
    def delete(name: str) -> str:
        """Delete something.

        Args:
            name: what
        """
        return f"deleted {name}"

    turns: list[Any] = [
        {"tool_calls": [{"name": "delete", "arguments": {"name": "a"}}]},
        {"tool_calls": [{"name": "delete", "arguments": {"name": "b"}}]},
        {"content": "done"},
    ]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(
            ScriptedModel(turns),
            [delete],
            journal=journal,
            approve=lambda call, _: "not b" if '"b"' in call.arguments else True,
        ).run("clean")
    assert replay(trace, tools=[delete]).identical


def test_an_interrupted_run_replays_up_to_where_it_ended(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    last_result = max(i for i, line in enumerate(lines) if '"tool_result"' in line[:30])
    trace.write_text(
        "".join(lines[: last_result - 1]) + lines[last_result - 1][:15], encoding="utf-8"
    )
    report = replay(trace)
    assert report.identical and report.compared == 1
    assert any("interrupted" in note for note in report.notes)


def test_text_protocol_runs_replay_natively(tmp_path: Path) -> None:
    turns = ["Thought: add.\nAction: calculator[2 + 2]", "Thought: done.\nFinish[4]"]
    tools = build_tools(("calculator",), ToolContext())
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        result = Agent(
            ScriptedModel(turns),
            tools,
            journal=journal,
            protocol="text",
            config={"tools": ["calculator"]},
        ).run("2 + 2?")
    assert result.answer == "4"
    report = replay(trace)
    assert report.identical and report.compared == 1


def test_replay_model_plays_the_turns_then_fails(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    model = resolve_model(f"replay:{trace}")
    assert isinstance(model, ReplayModel) and model.native_tools
    request = ModelRequest(messages=())
    turns = [model.complete(request) for _ in range(3)]
    assert [len(t.tool_calls) for t in turns] == [1, 2, 0]
    assert isinstance(turns[0], ModelTurn) and turns[0].text == "Look it up."
    with pytest.raises(ModelError, match="no more model turns"):
        model.complete(request)


def test_replay_model_spec_errors_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs a journal"):
        from_spec("replay", "", ModelSettings())
    with pytest.raises(UsageError, match="cannot read journal"):
        from_spec("replay", str(tmp_path / "absent.jsonl"), ModelSettings())


def test_journal_without_run_start_is_a_usage_error(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    trace.write_text(lines[0] + "".join(lines[2:]), encoding="utf-8")
    with pytest.raises(UsageError, match="no run_start"):
        replay(trace)


def test_cli_exit_codes(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    runner = CliRunner()
    same = runner.invoke(replay_command, [str(trace)])
    assert same.exit_code == 0 and "identical" in same.output
    (tmp_path / "notes.json").write_text(json.dumps(dict(NOTES, capital="Lyon")), encoding="utf-8")
    own = tmp_path / "replayed.jsonl"
    changed = runner.invoke(replay_command, [str(trace), "--json", "--journal", str(own)])
    assert changed.exit_code == 1
    payload = json.loads(changed.output)
    assert payload["identical"] is False and payload["divergence"]["actual"]["output"] == "Lyon"
    assert own.exists()
    assert runner.invoke(replay_command, [str(tmp_path / "absent.jsonl")]).exit_code == 2
    not_journal = tmp_path / "notes.json"
    bad = runner.invoke(replay_command, [str(not_journal)])
    assert bad.exit_code == 2 and "not a reactloop journal" in bad.output
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\n")
    assert runner.invoke(replay_command, [str(binary)]).exit_code == 2


@pytest.mark.parametrize(
    "turn",
    ['"just text"', '{"text": ["a"]}', '{"tool_calls": [1]}', '{"usage": {"input_tokens": "x"}}'],
)
def test_malformed_turns_are_journal_errors(tmp_path: Path, turn: str) -> None:
    trace = recorded_run(tmp_path)
    lines = trace.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "turn")
    lines[index] = '{"type": "turn", "step": 1, "turn": ' + turn + "}\n"
    trace.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(JournalError, match="malformed turn"):
        replay(trace)
    assert CliRunner().invoke(replay_command, [str(trace)]).exit_code == 2


def test_a_run_with_string_limits_replays(tmp_path: Path) -> None:
    from reactloop import Agent, Journal, Limits, ScriptedModel
    from reactloop.replay import replay
    from reactloop.tools import calculator_tool

    call = {"name": "calculator", "arguments": {"expression": "2+3"}}
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(
            ScriptedModel([{"tool_calls": [call]}, "5"]),
            [calculator_tool()],
            limits=Limits(context_policy="trim", context_tokens=100_000),
            journal=journal,
            config={"tools": ["calculator"]},
        ).run("2+3?")
    assert replay(trace).identical
