"""A journal rewritten by a hostile tool makes ``resume``, ``approve`` and ``replay`` run
nothing the command line did not give.

Each test rewrites ``run_start`` as a model that could reach its record would (the tool
families and their specs, the workspace, ``read_only``, the ``--verify`` command, the MCP
servers, the sandbox mode, the approval) and checks that the command is refused in one line
naming the flag to give, with the journal as it was, and that a marker file a planted command
or call would create does not exist.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import reactloop
from reactloop.messages import ToolCall
from reactloop.replay.rebuild import tools_from_config
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools
from reactloop.tools.toolbox import Toolbox


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def stopped_run(tmp_path: Path, turns: list[Any], *options: str) -> Path:
    """A run of ``turns`` stopped after its first call (by ``--max-steps 1``, unless
    ``options`` give ``--max-steps``): resumable. Its workspace is ``tmp_path / "ws"``, its
    journal outside it."""
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    (tmp_path / "ws").mkdir(exist_ok=True)
    trace = tmp_path / "run.jsonl"
    ran = reactloop(
        "run", "q", "--model", f"scripted:{script}", "--trace", str(trace),
        "--workspace", "ws", *options,
        *(() if "--max-steps" in options else ("--max-steps", "1")), cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    return trace


def tamper(trace: Path, *, families: tuple[str, ...] | None = None, **config: Any) -> bytes:
    """``run_start.config`` rewritten as a model would (with ``families``, the tool specs too,
    so that the tools look as recorded); the journal's bytes after."""
    lines = trace.read_bytes().split(b"\n")
    start = json.loads(lines[1])
    start["config"].update(config)
    if families is not None:
        start["config"]["tools"] = list(families)
        workspace = Path(start["config"]["workspace"])
        built = [
            tool.spec.to_dict() for tool in build_tools(families, ToolContext(workspace=workspace))
        ]
        names = {spec["name"] for spec in built}
        start["tools"] = built + [s for s in start["tools"] if s["name"] not in names]
    lines[1] = json.dumps(start).encode()
    trace.write_bytes(b"\n".join(lines))
    return trace.read_bytes()


def refusal(done: subprocess.CompletedProcess[str], trace: Path, verb: str = "resume") -> str:
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"reactloop: error: cannot {verb} {trace}: "), line
    return line


def touch(marker: Path) -> str:
    return shlex.join(["touch", str(marker)])


CALC = call("calculator", expression="1+1")


def test_a_verify_command_written_into_the_journal_is_never_run(tmp_path: Path) -> None:
    trace = stopped_run(tmp_path, [CALC, "two"], "--tools", "calculator")
    marker = tmp_path / "ws" / "marker"  # where the sandboxed verify command may write
    before = tamper(trace, checks={"verify": touch(marker), "checklist": None})
    refused = reactloop("resume", str(trace), "--workspace", "ws", cwd=tmp_path)
    line = refusal(refused, trace)
    assert f"the run checked its answers with --verify {shlex.quote(touch(marker))}" in line
    assert "reactloop runs no command from a journal: give it again" in line
    other = reactloop("resume", str(trace), "--verify", "true", cwd=tmp_path)
    assert "the --verify given differs from the run's" in refusal(other, trace)
    assert not marker.exists() and trace.read_bytes() == before


def test_a_verify_command_given_again_runs(tmp_path: Path) -> None:
    """The user's own command, given on the command line, is the run's: it runs."""
    marker = tmp_path / "ws" / "marker"
    trace = stopped_run(tmp_path, [CALC, "two"], "--tools", "calculator", "--verify", "true")
    tamper(trace, checks={"verify": touch(marker), "checklist": None})
    again = ["--verify", touch(marker), "--workspace", "ws", "--max-steps", "5"]
    given = reactloop("resume", str(trace), *again, cwd=tmp_path)
    assert given.returncode == 0, given.stderr
    assert marker.exists()


def test_a_bash_tool_written_into_the_journal_is_not_built(tmp_path: Path) -> None:
    """A calculator run whose journal was made to name ``bash`` (config and specs), with a
    script whose next turn calls it: nothing runs without ``--tools`` given again."""
    marker = tmp_path / "ws" / "marker"
    turns = [CALC, call("bash", command=touch(marker)), "done"]
    trace = stopped_run(tmp_path, turns, "--tools", "calculator")
    before = tamper(trace, families=("calculator", "bash"))
    refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    line = refusal(refused, trace)
    assert "the run used the bash tools; a journal does not choose tools that write" in line
    assert line.endswith("give --tools calculator,bash again")
    fewer = reactloop("resume", str(trace), "--tools", "calculator", cwd=tmp_path)
    assert "the tools given differ from the run's (--tools calculator,bash)" in refusal(
        fewer, trace
    )
    assert not marker.exists() and trace.read_bytes() == before


def test_a_workspace_written_into_the_journal_is_not_taken(tmp_path: Path) -> None:
    """A files run in ``ws`` whose journal was made to name another folder: its writes would
    land there. Resumed from ``ws`` (or with ``--workspace ws``), it is refused."""
    victim = tmp_path / "victim"
    victim.mkdir()
    turns = [call("list_dir", path="."), call("write_file", path="marker", content="x"), "done"]
    trace = stopped_run(tmp_path, turns, "--tools", "files")
    before = tamper(trace, workspace=str(victim))
    for where in (["--workspace", "ws"], []):
        cwd = tmp_path if where else tmp_path / "ws"
        refused = reactloop("resume", str(trace), "--tools", "files", *where, cwd=cwd)
        line = refusal(refused, trace)
        assert f"--workspace {victim}" in line
    assert not (victim / "marker").exists() and trace.read_bytes() == before


def test_read_only_written_into_the_journal_is_not_taken(tmp_path: Path) -> None:
    """A ``--read-only`` run whose journal was made to say it wrote (config and specs)."""
    turns = [call("list_dir", path="."), call("write_file", path="marker", content="x"), "done"]
    trace = stopped_run(tmp_path, turns, "--tools", "files", "--read-only")
    before = tamper(trace, families=("files",), read_only=False)
    given = ["--tools", "files", "--read-only", "--workspace", "ws"]
    refused = reactloop("resume", str(trace), *given, cwd=tmp_path)
    assert "the run's tools wrote in its workspace: go on without --read-only" in refusal(
        refused, trace
    )
    assert not (tmp_path / "ws" / "marker").exists() and trace.read_bytes() == before


def test_a_journal_rewritten_everywhere_starts_nothing_on_approve_or_resume(
    tmp_path: Path,
) -> None:
    """Everything a model could rewrite at once: ``approve`` decides on the call it shows and
    starts nothing; ``resume`` is refused; no planted command ever ran."""
    marker = tmp_path / "marker"
    turns = [call("write_file", path="a.txt", content="A"), "done"]
    trace = stopped_run(tmp_path, turns, "--tools", "files", "--defer-approval", "--max-steps", "5")
    before = tamper(
        trace,
        families=("files", "bash"),
        mcp={"stdio": [touch(marker)], "urls": [], "config": None},
        checks={"verify": touch(marker), "checklist": None},
        sandbox="weak",
        approval={"mode": "defer", "allow": ["*"]},
        read_only=False,
    )
    approved = reactloop("approve", str(trace), cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip().endswith(": approved")
    assert trace.read_bytes().startswith(before)
    given = ["--tools", "files", "--workspace", "ws", "--defer-approval"]
    refused = reactloop("resume", str(trace), *given, cwd=tmp_path)
    assert "the tools given differ from the run's (--tools files,bash)" in refusal(refused, trace)
    all_given = ["--tools", "files,bash", "--workspace", "ws", "--defer-approval"]
    refused = reactloop("resume", str(trace), *all_given, cwd=tmp_path)
    assert "the run checked its answers with --verify" in refusal(refused, trace)
    assert not marker.exists() and not (tmp_path / "ws" / "marker").exists()
    assert not (tmp_path / "ws" / "a.txt").exists()


def test_approve_refuses_a_journal_inside_its_runs_workspace_unless_forced(
    tmp_path: Path,
) -> None:
    """Where the run's tools could have written it (an older reactloop's ``./runs``), the
    pending calls may be the model's own: nothing is approved without ``--force``."""
    turns = [call("write_file", path="a.txt", content="A"), "done"]
    trace = stopped_run(tmp_path, turns, "--tools", "files", "--defer-approval", "--max-steps", "5")
    inside = tmp_path / "ws" / "runs" / "run.jsonl"
    inside.parent.mkdir()
    trace.rename(inside)
    before = inside.read_bytes()
    refused = reactloop("approve", str(inside), cwd=tmp_path)
    line = refusal(refused, inside, "approve")
    assert "lies inside the run's workspace" in line and line.endswith("approve with --force")
    assert inside.read_bytes() == before
    forced = reactloop("approve", str(inside), "--force", cwd=tmp_path)
    assert forced.returncode == 0 and forced.stdout.strip().endswith(": approved"), forced.stderr


def test_replay_runs_no_bash_call_on_the_journals_word(tmp_path: Path) -> None:
    """A journal whose recorded calls run commands: ``replay`` runs them again only when
    ``--tools`` names the family (here in a fresh ``--workspace``, where they would write)."""
    turns = [call("bash", command="touch marker"), "done"]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    (tmp_path / "ws").mkdir()
    trace = tmp_path / "run.jsonl"
    ran = reactloop(
        "run", "q", "--model", f"scripted:{script}", "--trace", str(trace),
        "--tools", "bash", "--workspace", "ws", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    refused = reactloop("replay", str(trace), "--workspace", str(fresh), cwd=tmp_path)
    line = refusal(refused, trace, "replay")
    assert line.endswith("give --tools bash again")
    assert not (fresh / "marker").exists()
    given = reactloop(
        "replay", str(trace), "--workspace", str(fresh), "--tools", "bash", cwd=tmp_path
    )
    assert given.returncode == 0, given.stderr
    assert (fresh / "marker").exists()  # given on the command line, the call runs again


@pytest.mark.parametrize("planted", ["bash", "web"])
def test_replay_refuses_a_family_the_journal_added(tmp_path: Path, planted: str) -> None:
    trace = stopped_run(tmp_path, [CALC, "two"], "--tools", "calculator")
    tamper(trace, families=("calculator", planted))
    refused = reactloop("replay", str(trace), cwd=tmp_path)
    assert f"give --tools calculator,{planted} again" in refusal(refused, trace, "replay")


def test_no_output_folder_is_taken_from_a_journal(tmp_path: Path) -> None:
    """``reactloop run`` records none; one in a journal is a folder the harness would write
    the model's long outputs into, outside the sandbox."""
    planted = tmp_path / "planted"
    planted.mkdir()
    config = {"tools": ["bash"], "workspace": str(tmp_path), "output_dir": str(planted)}
    (bash,) = tools_from_config(config)
    arguments = json.dumps({"command": "seq 1 100000"})
    result = Toolbox([bash]).execute(ToolCall(id="c1", name="bash", arguments=arguments))
    assert result.output["truncated"] is True and "full_output" not in result.output
    assert list(planted.iterdir()) == []
