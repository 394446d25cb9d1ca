"""Replay: the recorded model turns re-drive the loop against the real tools; the report says
``identical`` or names the first divergence."""

from __future__ import annotations

import _thread
import json
import os
import select
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import Agent, FunctionModel, Journal, ModelRequest, ScriptedModel, tool
from reactloop.cli.trace import replay as replay_command
from reactloop.errors import JournalError, ModelError, UsageError
from reactloop.messages import ModelTurn
from reactloop.models import resolve_model
from reactloop.models.base import ModelSettings
from reactloop.models.replay import ReplayModel, from_spec
from reactloop.replay import replay
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

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
    payload = json.loads(changed.stdout)
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
    with pytest.raises(JournalError, match=r"malformed turn|turn's 'turn' is not an object"):
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


def test_replay_with_other_notes_diverges_exactly_where_the_notes_changed(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)
    recorded_notes = (tmp_path / "notes.json").read_text(encoding="utf-8")
    for key, step in (("population", 1), ("capital", 2)):
        other = tmp_path / f"notes-{key}.json"
        other.write_text(json.dumps(dict(NOTES, **{key: "changed"})), encoding="utf-8")
        divergence = replay(trace, notes=other).divergence
        assert divergence is not None
        assert (divergence.kind, divergence.step, divergence.tool) == (
            "tool_result",
            step,
            "lookup",
        )
        assert json.loads(divergence.arguments or "") == {"key": key}
        assert divergence.actual == {"ok": True, "output": "changed"}
    same = tmp_path / "same.json"
    same.write_text(json.dumps(dict(NOTES, unused="new")), encoding="utf-8")
    assert replay(trace, notes=same).identical
    assert (tmp_path / "notes.json").read_text(encoding="utf-8") == recorded_notes
    changed = CliRunner().invoke(
        replay_command, [str(trace), "--notes", str(tmp_path / "notes-capital.json")]
    )
    assert changed.exit_code == 1 and "diverged at step 2, tool lookup" in changed.stdout
    assert "runs no call with side effects" in changed.stderr


EDIT_TURNS: list[Any] = [
    {"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "calc.py", "old_text": "a = 1", "new_text": "a = 2"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
    "Done: a is 2.",
]  # fmt: skip


def edit_run(tmp_path: Path, *, put_back: bool = True) -> tuple[Path, Path]:
    """A run whose edit_file changed calc.py in its workspace, then (``put_back``) calc.py put
    back as it was."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "calc.py").write_text("a = 1\n", encoding="utf-8")
    config = {"tools": ["files"], "workspace": str(workspace), "read_only": False}
    tools = build_tools(("files",), ToolContext(workspace=workspace))
    trace = tmp_path / "edit.jsonl"
    with Journal(trace) as journal:
        result = Agent(ScriptedModel(EDIT_TURNS), tools, journal=journal, config=config).run("a=2")
    assert result.answer == "Done: a is 2."
    assert (workspace / "calc.py").read_text(encoding="utf-8") == "a = 2\n"
    if put_back:
        (workspace / "calc.py").write_text("a = 1\n", encoding="utf-8")  # as `git checkout` would
    return trace, workspace


def without_workspace_record(trace: Path) -> None:
    """The journal as an older reactloop wrote it: its run_start records no workspace."""
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    for event in events:
        event.pop("workspace", None)
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def test_replaying_an_edit_starts_from_the_snapshot_and_leaves_the_workspace_alone(
    tmp_path: Path,
) -> None:
    trace, workspace = edit_run(tmp_path, put_back=False)
    plans: list[Any] = []
    report = replay(trace, announce=plans.append)
    assert report.identical, report.describe()  # from a = 1, as the run started, not a = 2
    assert (workspace / "calc.py").read_text(encoding="utf-8") == "a = 2\n"
    (plan,) = plans
    assert plan.site.how == "snapshot" and plan.site.recorded == workspace
    assert plan.site.path != workspace and not plan.site.path.exists()  # removed afterwards
    assert [(c.step, c.tool) for c in plan.will_run] == [(1, "edit_file")]
    assert "restored from the journal's snapshot of" in plan.describe()


def test_a_journal_without_a_workspace_record_replays_in_a_copy_and_says_so(
    tmp_path: Path,
) -> None:
    trace, workspace = edit_run(tmp_path)
    without_workspace_record(trace)
    plans: list[Any] = []
    report = replay(trace, announce=plans.append)
    assert report.identical, report.describe()
    assert (workspace / "calc.py").read_text(encoding="utf-8") == "a = 1\n"
    (plan,) = plans
    assert plan.site.how == "copy" and plan.site.recorded == workspace
    assert plan.site.path != workspace and not plan.site.path.exists()  # removed afterwards
    assert "temporary copy of" in plan.describe()
    assert "cannot check that it starts from there" in plan.describe()


def test_replay_in_a_given_workspace_edits_that_one(tmp_path: Path) -> None:
    trace, workspace = edit_run(tmp_path)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "calc.py").write_text("a = 1\n", encoding="utf-8")
    result = CliRunner().invoke(
        replay_command, [str(trace), "--workspace", str(fresh), "--tools", "files"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("identical")  # the plan goes first, to stderr
    assert "runs 1 call(s) with side effects again:" in result.stderr
    assert 'step 1: edit_file {"path": "calc.py", "old_text": "a = 1"' in result.stderr
    assert f"tools run in {fresh.resolve()} (given)" in result.stderr
    assert (fresh / "calc.py").read_text(encoding="utf-8") == "a = 2\n"
    assert (workspace / "calc.py").read_text(encoding="utf-8") == "a = 1\n"


def test_a_replay_refuses_when_the_recorded_workspace_is_gone(tmp_path: Path) -> None:
    trace, workspace = edit_run(tmp_path)
    without_workspace_record(trace)  # with a snapshot, it replays from that (tested above)
    (workspace / "calc.py").unlink()
    workspace.rmdir()
    with pytest.raises(UsageError, match=r"is gone.*--workspace DIR"):
        replay(trace)
    gone = CliRunner().invoke(replay_command, [str(trace), "--tools", "files"])
    assert gone.exit_code == 2 and "is gone" in gone.stderr


def test_replaying_a_cancelled_slow_command_does_not_run_it_again(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    fifo = workspace / "started.fifo"
    os.mkfifo(fifo)
    command = "echo ran >> ran.txt; echo go > started.fifo; sleep 30"
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, "never"]
    tools = build_tools(("bash",), ToolContext(workspace=workspace))
    config = {"tools": ["bash"], "workspace": str(workspace), "read_only": False}
    trace = tmp_path / "cancelled.jsonl"
    watcher = threading.Thread(target=_interrupt_when_started, args=(fifo,), daemon=True)
    watcher.start()
    with Journal(trace) as journal:
        recorded = Agent(ScriptedModel(turns), tools, journal=journal, config=config).run("slow")
    watcher.join(timeout=60)
    assert str(recorded.stop_reason) == "cancelled"
    assert (workspace / "ran.txt").read_text(encoding="utf-8") == "ran\n"

    started = time.monotonic()
    plans: list[Any] = []
    report = replay(trace, announce=plans.append)
    assert time.monotonic() - started < 20  # not the 30 s command again
    assert report.identical, report.describe()
    assert report.result is not None and str(report.result.stop_reason) == "cancelled"
    assert [c.tool for c in plans[0].not_again] == ["bash"] and plans[0].will_run == ()
    assert (workspace / "ran.txt").read_text(encoding="utf-8") == "ran\n"  # not run here again


def _interrupt_when_started(fifo: Path) -> None:
    """Ctrl-C for the main thread once the command has said it started (through the FIFO)."""
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], deadline - time.monotonic())
            if ready and os.read(reader, 16):
                _thread.interrupt_main()
                return
    finally:
        os.close(reader)


def test_a_run_cancelled_during_a_model_call_replays_to_the_same_cancellation(
    tmp_path: Path,
) -> None:
    calls = iter([{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}])

    def model(request: ModelRequest) -> Any:
        turn = next(calls, None)
        if turn is None:
            raise KeyboardInterrupt  # Ctrl-C while the second model call was under way
        return turn

    trace = tmp_path / "run.jsonl"
    tools = build_tools(("calculator",), ToolContext())
    with Journal(trace) as journal:
        result = Agent(
            FunctionModel(model), tools, journal=journal, config={"tools": ["calculator"]}
        ).run("2+3?")
    assert str(result.stop_reason) == "cancelled"
    report = replay(trace)
    assert report.identical, report.describe()
    assert report.compared == 1
    assert report.result is not None and str(report.result.stop_reason) == "cancelled"
    assert report.result.model_calls == 1  # the replay did not ask for a turn it does not have


def test_a_conversation_journal_replays_its_first_run_and_says_so(tmp_path: Path) -> None:
    from reactloop import Conversation

    call = {"name": "calculator", "arguments": {"expression": "2+3"}}
    model = ScriptedModel([{"tool_calls": [call]}, "5", "Yes, 5."])
    trace = tmp_path / "chat.jsonl"
    agent = Agent(
        model, build_tools(("calculator",), ToolContext()), config={"tools": ["calculator"]}
    )
    with Journal(trace) as journal:
        chat = Conversation(agent, journal=journal)
        chat.ask("2+3?")
        chat.ask("Sure?")
    report = replay(trace)
    assert report.identical, report.describe()
    assert report.result is not None and report.result.answer == "5"
    assert any("holds 2 runs" in note for note in report.notes)
    # a damaged line in the second run is not read: the first run replays as it did
    with trace.open("a", encoding="utf-8") as file:
        file.write('{"type": "turn", "step": 9, "turn": "not an object"}\n')
    assert replay(trace).identical


def test_a_run_whose_tools_use_no_workspace_says_so_and_checks_nothing(tmp_path: Path) -> None:
    trace = recorded_run(tmp_path)  # calculator and lookup
    plans: list[Any] = []
    assert replay(trace, announce=plans.append).identical
    assert plans[0].describe().splitlines()[0] == "the tools use no workspace"
    assert "cannot check" not in plans[0].describe()
