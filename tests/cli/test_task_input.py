"""Where a task comes from: ``reactloop "TASK"`` without ``run``, ``-`` and a pipe (stdin),
``--task-file``, a task longer than a command line may be; and the near miss of a command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from helpers import invoke, script
from reactloop import read_journal
from reactloop.cli import main
from reactloop.cli.model_record import _settings, recorded_model
from reactloop.cli.run import run
from reactloop.errors import ModelError, UsageError
from reactloop.models.local.options import LocalOptions
from reactloop.models.local.session import Session

SCRIPT = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}, "5"]


def _task_of(trace: Path) -> str:
    start = next(r for r in read_journal(trace) if r["type"] == "run_start")
    return str(start["task"])


def test_a_first_word_that_is_no_command_is_the_task(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    spec = script(tmp_path, SCRIPT)
    code, out, _ = invoke("what is 2+3?", "--model", spec, "--trace", str(trace))
    assert (code, out) == (0, "5\n")
    assert _task_of(trace) == "what is 2+3?"


def test_options_first_start_a_run_too(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    code, out, _ = invoke("--model", script(tmp_path, SCRIPT), "--trace", str(trace), "q")
    assert (code, out) == (0, "5\n")
    assert _task_of(trace) == "q"


def test_a_subcommand_keeps_its_name_and_a_typo_of_one_is_refused() -> None:
    code, out, _ = invoke("tools")
    assert code == 0 and json.loads(out)[0]["name"] == "calculator"
    code, _, err = invoke("rnu", "--model", "scripted:x.json")
    assert code == 2
    assert err == (
        "reactloop: error: no command 'rnu': did you mean 'run'? "
        "(to give it as the task: reactloop run 'rnu')\n"
    )
    code, _, err = invoke("what", "--model", "nope:x")  # a word, not a typo of chat
    assert code == 2 and "unknown model spec 'nope:x'" in err


def test_dash_reads_the_task_from_stdin(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    args = ["run", "-", "--model", script(tmp_path, SCRIPT), "--trace", str(trace)]
    result = CliRunner().invoke(main, args, input="the task\nin two lines\n")
    assert result.exit_code == 0, result.stderr
    assert _task_of(trace) == "the task\nin two lines"


def test_dash_alone_is_a_run_reading_stdin(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    args = ["-", "--model", script(tmp_path, SCRIPT), "--trace", str(trace)]
    result = CliRunner().invoke(main, args, input="from a pipe")
    assert result.exit_code == 0, result.stderr
    assert _task_of(trace) == "from a pipe"


def test_help_lists_the_new_commands_with_their_exit_codes() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "logs List the runs in the runs folder, newest first" in flat
    assert "models List the providers, which are configured" in flat
    assert "logs 0, 1 --last found no run models 0" in flat
    assert 'reactloop "TASK" [OPTIONS]` is short for `reactloop run "TASK" [OPTIONS]' in flat


def test_task_file_and_its_errors(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    task = tmp_path / "task.md"
    task.write_text("\ufeffsum 2 and 3\n", encoding="utf-8")
    spec = script(tmp_path, SCRIPT)
    code, _, err = invoke("run", "--task-file", str(task), "--model", spec, "--trace", str(trace))
    assert code == 0, err
    assert _task_of(trace) == "sum 2 and 3"
    code, _, err = invoke("run", "q", "--task-file", str(task), "--model", spec)
    assert code == 2
    assert err == "reactloop: error: give the task as TASK or as --task-file, not both\n"
    code, _, err = invoke("run", "--task-file", str(tmp_path / "none.md"), "--model", spec)
    assert code == 2 and "task file not found" in err
    task.write_bytes(b"\xff\xfe task")
    code, _, err = invoke("run", "--task-file", str(task), "--model", spec)
    assert code == 2 and "is not UTF-8 text" in err


def test_no_task_on_a_terminal_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = invoke("run", "--model", script(tmp_path, SCRIPT))  # the runner's stdin: empty
    assert (code, err) == (2, "reactloop: error: TASK is empty: say what the agent should do\n")


def test_a_piped_task_longer_than_a_command_line(tmp_path: Path) -> None:
    """A real pipe into a real process, with a task over Linux's 128 KiB limit on one argument
    (MAX_ARG_STRLEN): no TASK at all, the pipe is read."""
    trace = tmp_path / "t.jsonl"
    task = "add these: " + "1 + " * 60_000 + "1"
    process = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", "--model", script(tmp_path, SCRIPT),
         "--trace", str(trace)],
        input=task, capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )  # fmt: skip
    assert process.returncode == 0, process.stderr
    assert process.stdout == "5\n"
    assert _task_of(trace) == task


def test_local_context_is_for_the_embedded_model_only() -> None:
    code, _, err = invoke("run", "q", "--model", "openai:m", "--local-context", "8192")
    assert code == 2
    assert "--local-context is for the embedded model (local:…), not 'openai:m'" in err


def test_the_context_overflow_message_names_flags_run_has() -> None:
    """The embedded model's "prompt too long" names options a user can pass, each one of run's."""
    holder = SimpleNamespace(options=LocalOptions(n_ctx=512))
    with pytest.raises(ModelError) as raised:
        Session._check_context(holder, 600)  # type: ignore[arg-type]
    named = set(re.findall(r"--[a-z-]+", str(raised.value)))
    assert named >= {"--local-context", "--context-tokens", "--context-policy"}
    options = {opt for param in run.params for opt in param.opts}
    assert named <= options


def test_a_local_context_is_recorded_for_resume_and_checked_when_read(tmp_path: Path) -> None:
    assert _settings({"extra": {"n_ctx": 8192}}, None).extra == {"n_ctx": 8192}
    for bad in (10**9, "8192", 100, True):
        with pytest.raises(UsageError, match="model settings are invalid"):
            recorded_model(script(tmp_path, ["x"]), {"model_settings": {"extra": {"n_ctx": bad}}},
                           base_url=None)  # fmt: skip
