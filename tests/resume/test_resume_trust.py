"""``reactloop resume`` starts nothing, widens nothing and sends nowhere on a journal's word.

Each test tampers with a journal the way a model that could write it would (its ``run_start``
config: the MCP servers, the approval, the base URL, the model file), and checks that the
resume is refused in one line, before anything starts, with the journal as it was. A marker
file proves that no command ran; the fake server's request log that no request went out.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import reactloop
from reactloop import read_journal
from reactloop.testing import FakeOpenAIServer, completion, json_reply


def stopped_run(tmp_path: Path, *options: str) -> Path:
    """A calculator run stopped by ``--max-steps 1`` after its first call: resumable."""
    turns = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]},
        "two",
    ]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    ran = reactloop(
        "run", "q", "--model", f"scripted:{script}", "--tools", "calculator",
        "--trace", str(trace), "--max-steps", "1", *options, cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    return trace


def tamper(trace: Path, **config: Any) -> bytes:
    """``run_start.config`` rewritten as a model would; the journal's bytes after."""
    lines = trace.read_bytes().split(b"\n")
    start = json.loads(lines[1])
    start["config"].update(config)
    lines[1] = json.dumps(start).encode()
    trace.write_bytes(b"\n".join(lines))
    return trace.read_bytes()


def one_line_refusal(done: subprocess.CompletedProcess[str], trace: Path) -> str:
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"reactloop: error: cannot resume {trace}: "), line
    return line


def marker_command(marker: Path) -> str:
    return shlex.join([sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"])


def test_an_mcp_command_written_into_the_journal_is_never_started(tmp_path: Path) -> None:
    trace = stopped_run(tmp_path)
    marker = tmp_path / "marker"
    planted = {"stdio": [marker_command(marker)], "urls": [], "config": None}
    before = tamper(trace, mcp=planted)
    refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    line = one_line_refusal(refused, trace)
    assert "reactloop starts none from a journal: give them again" in line
    assert not marker.exists() and trace.read_bytes() == before


def test_a_journal_whose_mcp_command_differs_from_the_one_given_is_refused(
    tmp_path: Path,
) -> None:
    """The user gives the server the run had; the journal was made to name another."""
    marker = tmp_path / "marker"
    trace = stopped_run(tmp_path)
    real = shlex.join([sys.executable, "-c", "pass"])
    planted = {"stdio": [marker_command(marker)], "urls": [], "config": None}
    before = tamper(trace, mcp=planted)
    refused = reactloop("resume", str(trace), "--mcp", real, "--max-steps", "5", cwd=tmp_path)
    assert "the MCP servers given differ from the run's" in one_line_refusal(refused, trace)
    assert not marker.exists() and trace.read_bytes() == before


def test_mcp_servers_given_to_the_resume_of_a_run_without_any_are_refused(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "marker"
    trace = stopped_run(tmp_path)
    before = trace.read_bytes()
    given = ["--mcp", marker_command(marker), "--max-steps", "5"]
    refused = reactloop("resume", str(trace), *given, cwd=tmp_path)
    assert "the run started no MCP server" in one_line_refusal(refused, trace)
    assert not marker.exists() and trace.read_bytes() == before


def test_an_approval_recorded_is_not_dropped_and_its_allow_patterns_are_not_taken(
    tmp_path: Path,
) -> None:
    trace = stopped_run(tmp_path, "--approve")
    before = tamper(trace, approval={"mode": "ask", "allow": ["*"]})
    refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    line = one_line_refusal(refused, trace)
    assert "give --approve or --defer-approval again" in line
    assert trace.read_bytes() == before
    resumed = reactloop("resume", str(trace), "--max-steps", "5", "--approve", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr  # the calculator has no side effect


def test_a_base_url_written_into_the_journal_gets_no_request(tmp_path: Path) -> None:
    """A model that rewrote ``model_settings.base_url`` to a server of its own would get the
    conversation (and the user's key): without ``--base-url`` given again, nothing is sent."""
    with FakeOpenAIServer(responder=lambda _: json_reply(completion("never"))) as planted:
        trace = stopped_run(tmp_path)
        lines = trace.read_bytes().split(b"\n")
        start = json.loads(lines[1])
        start["config"]["model_spec"] = "openai:gpt-4o-mini"
        start["config"]["model_settings"]["base_url"] = planted.base_url
        lines[1] = json.dumps(start).encode()
        trace.write_bytes(b"\n".join(lines))
        refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
        line = one_line_refusal(refused, trace)
        assert f"give --base-url {planted.base_url} again" in line
        assert planted.requests == []


def test_a_model_file_written_into_the_journal_is_not_loaded(tmp_path: Path) -> None:
    trace = stopped_run(tmp_path)
    before = tamper(trace, model_spec="local:/tmp/chosen-by-the-model.gguf")
    refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    assert "give --model again to load it" in one_line_refusal(refused, trace)
    assert trace.read_bytes() == before


def test_a_run_of_the_default_model_resumes_without_model(tmp_path: Path) -> None:
    """The default model (here ``$REACTLOOP_MODEL``) is recorded as the run's spec."""
    turns = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+2"}}]}, "4"]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    env = {"REACTLOOP_MODEL": f"scripted:{script}"}
    first = ["run", "q", "--tools", "calculator", "--trace", str(trace), "--max-steps", "1"]
    assert reactloop(*first, cwd=tmp_path, **env).returncode == 1
    resumed = reactloop("resume", str(trace), "--max-steps", "5", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "4"
    assert read_journal(trace)[0]["config"]["model_spec"] == f"scripted:{script}"


def test_an_older_journal_without_a_recorded_spec_resumes_with_the_model_run_start_names(
    tmp_path: Path,
) -> None:
    """Before the default model's spec was recorded, ``run_start.model`` already named it."""
    trace = stopped_run(tmp_path)
    lines = trace.read_bytes().split(b"\n")
    start = json.loads(lines[1])
    assert start["model"] == "scripted:turns.json"  # as a spec, from the run's folder
    start["config"]["model_spec"] = None
    lines[1] = json.dumps(start).encode()
    trace.write_bytes(b"\n".join(lines))
    resumed = reactloop("resume", str(trace), "--max-steps", "5", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "two"


def test_a_journal_inside_its_runs_workspace_is_refused_unless_forced(tmp_path: Path) -> None:
    """An older reactloop wrote ``./runs`` in the workspace, where the model's ``files`` tools
    could rewrite it: such a journal is not trusted without ``--force``."""
    trace = stopped_run(tmp_path)
    before = tamper(trace, tools=["calculator", "files"], workspace=str(tmp_path))
    refused = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    line = one_line_refusal(refused, trace)
    assert f"the journal lies inside the run's workspace {tmp_path}" in line
    assert "--force" in line and trace.read_bytes() == before
    tamper(trace, read_only=True)  # tools that only read: the journal was out of their reach
    read_only = reactloop("resume", str(trace), "--max-steps", "5", cwd=tmp_path)
    assert "inside the run's workspace" not in read_only.stderr
