"""What a new user meets first on the command line: Ctrl-C, help, where journals go, doctor."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from helpers import invoke
from reactloop import read_journal

SCRIPT = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}, "5"]


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
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    script = tmp_path / "s.json"
    script.write_text(json.dumps(SCRIPT))
    code, _, err = invoke("run", "q", "--model", f"scripted:{script}")
    assert code == 0
    runs = tmp_path / "state" / "reactloop" / "runs"
    assert f"journals go to {runs}/ (created now" in " ".join(err.split())
    assert len(list(runs.glob("*.jsonl"))) == 1 and not (tmp_path / "runs").exists()
    assert runs.stat().st_mode & 0o777 == 0o700  # other users do not read the conversations
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
    assert code == 3 and out.strip() == "43"
    assert "Forced answer" in err
    code, out, _ = invoke(*args, "--json")
    assert code == 3 and json.loads(out)["forced"] is True
    honest = tmp_path / "h.json"
    honest.write_text(json.dumps([call, "5"]))
    code, out, _ = invoke("run", "q", "--model", f"scripted:{honest}", "--no-trace", "--json")
    assert json.loads(out)["forced"] is False


def test_output_schema_makes_the_answer_a_validated_value(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({
        "type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"],
    }))  # fmt: skip
    script = tmp_path / "s.json"
    script.write_text(json.dumps(['{"total": "many"}', '{"total": 420}']))
    code, out, err = invoke(
        "run", "q", "--model", f"scripted:{script}", "--output-schema", str(schema),
        "--no-trace", "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["output"] == {"total": 420}  # the invalid first answer was sent back
    assert report["model_calls"] == 2


def test_otel_sends_the_runs_spans_and_metrics_to_the_endpoint_in_the_environment(
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import pytest

    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    paths: list[str] = []

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
        script = tmp_path / "s.json"
        script.write_text(json.dumps(SCRIPT))
        code, _, err = invoke("run", "q", "--model", f"scripted:{script}", "--otel", "--no-trace")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, err
    assert set(paths) == {"/v1/traces", "/v1/metrics"}  # flushed before the command returned
    assert paths.count("/v1/metrics") == 1  # the run's metrics, once


def test_verify_sends_a_premature_answer_back_and_long_run_options_reach_the_limits(
    tmp_path: Path,
) -> None:
    touch = {"tool_calls": [{"name": "bash", "arguments": {"command": "touch ok.txt"}}]}
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["done", touch, "done"]))
    trace = tmp_path / "run.jsonl"
    (tmp_path / "ws").mkdir()
    code, out, err = invoke(
        "run", "make ok.txt", "--model", f"scripted:{script}", "--tools", "bash",
        "--workspace", str(tmp_path / "ws"), "--verify", "test -f ok.txt", "--trace", str(trace),
        "--context-policy", "trim", "--context-tokens", "50000", "--max-observation-chars", "500",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == "done"
    records = list(read_journal(trace))
    checks = [r["passed"] for r in records if r["type"] == "check"]
    assert checks == [False, True]  # the first "done" came before the file existed
    limits = records[0]["limits"]
    assert (limits["context_policy"], limits["context_tokens"]) == ("trim", 50000)
    assert limits["max_observation_chars"] == 500


def test_thinking_and_cache_reach_anthropic_and_are_refused_elsewhere(
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from reactloop.testing import FakeAnthropicServer, message

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropicServer([message("5")]) as server:
        code, out, err = invoke(
            "run", "2+3?", "--model", "anthropic:claude-haiku-4-5", "--base-url",
            server.base_url, "--thinking", "2048", "--cache", "--no-trace",
        )  # fmt: skip
        body = server.requests[0].json
    assert code == 0, err
    assert out.strip() == "5"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "cache_control" in json.dumps(body)
    code, _, err = invoke("run", "q", "--model", "openai:m", "--thinking", "2048", "--no-trace")
    assert code == 2 and "--thinking and --cache are for anthropic" in err


def test_the_command_list_is_each_commands_own_help_without_importing_them() -> None:
    """``reactloop --help`` lists the commands from ``SUMMARIES`` (a newcomer's first command
    should not import ``eval``'s charts): each line is the first paragraph of that command's
    help, and listing them loads none of their modules."""
    import importlib
    import inspect

    from reactloop.cli.app import COMMANDS, SUMMARIES

    assert list(SUMMARIES) == list(COMMANDS)
    for name, target in COMMANDS.items():
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert SUMMARIES[name] == " ".join(first.split()), name
    code = (
        "import json, sys; from click.testing import CliRunner; from reactloop.cli import main; "
        "out = CliRunner().invoke(main, ['--help']).output; "
        "print(json.dumps([out, sorted(m for m in sys.modules if m.startswith('reactloop.cli'))]))"
    )
    shown, loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    assert "Run an agent on TASK and print its answer." in shown
    assert all(f"  {name} " in shown for name in COMMANDS)
    assert not {target.partition(":")[0] for target in COMMANDS.values()} & set(loaded)
