"""What a new user meets first on the command line: Ctrl-C, help, where journals go, doctor."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from reactloop import read_journal
from reactloop.cli import main

SCRIPT = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}, "5"]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_ctrl_c_exits_130_with_a_complete_journal(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with socket.create_server(("127.0.0.1", 0)) as server:  # accepts, never answers
        port = server.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, "-m", "reactloop", "run", "q", "--model", "openai:m",
             "--base-url", f"http://127.0.0.1:{port}/v1", "--trace", str(trace)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "OPENAI_API_KEY": "x"},
        )  # fmt: skip
        server.settimeout(60)
        connection, _ = server.accept()  # the model call is under way
        with connection:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    records = list(read_journal(trace))
    assert records[-1]["type"] == "stop"
    assert records[-1]["stop_reason"] == "cancelled"


def test_run_help_shows_defaults_and_describes_steps_and_protocol() -> None:
    code, out, _ = invoke("run", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "--max-seconds" in flat and "[default: 600.0;" in flat
    assert "Most model calls (steps)" in flat
    assert "text (Thought / Action / Observation" in flat
    assert "130 when interrupted" in flat


def test_a_new_runs_folder_is_announced_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REACTLOOP_RUNS_DIR", raising=False)
    script = tmp_path / "s.json"
    script.write_text(json.dumps(SCRIPT))
    code, _, err = invoke("run", "q", "--model", f"scripted:{script}")
    assert code == 0
    assert "journals go to runs/ (created now" in err
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 1
    code, _, err = invoke("run", "q", "--model", f"scripted:{script}")
    assert code == 0 and "created now" not in err


def test_doctor_without_loading_reports_the_model_cpu_and_sandbox() -> None:
    code, out, _ = invoke("doctor", "--no-load")
    lines = out.splitlines()
    assert any(line.startswith(("ok   model: run would use", "FAIL model")) for line in lines)
    assert any("cpu:" in line and "AMX:" in line for line in lines)
    assert any("bash sandbox:" in line for line in lines)
    assert code in (0, 1)


def test_a_forced_answer_is_marked_on_the_console_and_in_json(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}
    script = tmp_path / "s.json"
    script.write_text(json.dumps([call, "43"]))  # the second call is the last allowed
    args = ("run", "q", "--model", f"scripted:{script}", "--no-trace", "--max-steps", "2")
    code, out, err = invoke(*args)
    assert code == 0 and out.strip() == "43"
    assert "Forced answer" in err
    code, out, _ = invoke(*args, "--json")
    assert json.loads(out)["forced"] is True
    honest = tmp_path / "h.json"
    honest.write_text(json.dumps([call, "5"]))
    code, out, _ = invoke("run", "q", "--model", f"scripted:{honest}", "--no-trace", "--json")
    assert json.loads(out)["forced"] is False
