"""The command line: exit codes, --json shape, one-line usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import invoke
from reactloop import read_journal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tea"
TEA = [
    "Сколько стоит чай на всех гостей?",
    "--model",
    f"scripted:{EXAMPLES / 'script.json'}",
    "--notes",
    str(EXAMPLES / "notes.json"),
]


def test_tea_demo_prints_reason_act_observe_and_the_answer(tmp_path):
    trace = tmp_path / "t.jsonl"
    code, out, err = invoke("run", *TEA, "--trace", str(trace))
    assert code == 0
    assert out.strip() == "420"
    for word in ("Reason", "Act", "Observe", "lookup", "final_answer", str(trace)):
        assert word in err
    assert trace.exists()


def test_json_output_shape(tmp_path):
    code, out, _ = invoke("run", *TEA, "--json", "--trace", str(tmp_path / "t.jsonl"))
    assert code == 0
    payload = json.loads(out)
    assert payload["answer"] == "420"
    assert payload["stop_reason"] == "final_answer"
    assert (payload["model_calls"], payload["tool_calls"]) == (4, 3)
    assert set(payload["usage"]) >= {"input_tokens", "output_tokens", "cached_tokens"}
    assert payload["trace"] == str(tmp_path / "t.jsonl")


def test_default_trace_goes_to_the_runs_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("REACTLOOP_RUNS_DIR", str(tmp_path / "runs"))
    code, out, _ = invoke("run", *TEA, "--json")
    assert code == 0
    trace = Path(json.loads(out)["trace"])
    assert trace.parent == tmp_path / "runs" and trace.suffix == ".jsonl"


def test_no_answer_exits_1(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["no action here"] * 3))
    code, out, _ = invoke("run", "q", "--model", f"scripted:{script}", "--json", "--no-trace")
    assert code == 1
    payload = json.loads(out)
    assert payload["answer"] is None and payload["stop_reason"] == "format_errors"


def test_script_running_out_is_a_model_error_exit_1(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["Action: calculator[1+1]"]))
    code, out, _ = invoke("run", "q", "--model", f"scripted:{script}", "--json", "--no-trace")
    assert code == 1
    assert json.loads(out)["stop_reason"] == "model_error"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nope:x"], "unknown model spec 'nope:x'"),
        (["--model", "scripted:/does/not/exist.json"], "cannot read script"),
        (["--model", "scripted"], "needs a file"),
        (["--model", "scripted:x.json", "--notes", "/missing.json"], "notes file not found"),
        (["--model", "scripted:x.json", "--tools", "calculator,teleport"], "unknown tool family"),
        (["--model", "scripted:x.json", "--tools", "lookup"], "needs a notes file"),
        (["--max-steps", "0"], "max-steps"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, message):
    code, _, err = invoke("run", "q", *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_bad_script_file_is_a_usage_error(tmp_path):
    script = tmp_path / "s.json"
    script.write_text("{not json")
    code, _, err = invoke("run", "q", "--model", f"scripted:{script}")
    assert code == 2 and "is not JSON" in err


def test_tools_command_prints_one_json_document_of_schemas(tmp_path):
    code, out, _ = invoke("tools", "--tools", "calculator")
    assert code == 0
    specs = json.loads(out)
    assert [spec["name"] for spec in specs] == ["calculator"]
    assert "expression" in specs[0]["parameters"]["properties"]
    notes = tmp_path / "notes.json"
    notes.write_text('{"a": "1"}')
    code, out, _ = invoke("tools", "--notes", str(notes))  # the default follows run's
    assert [spec["name"] for spec in json.loads(out)] == ["calculator", "lookup"]


def test_entry_point_runs_as_a_real_process(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "reactloop", "run", *TEA, "--json", "--no-trace"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["answer"] == "420"


def test_max_cost_needs_prices():
    code, _, err = invoke("run", *TEA, "--max-cost", "1")
    assert code == 2 and "--prices" in err


def test_cost_is_reported_with_a_price_table(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"scripted*": {"input": 1, "cached_input": 0.5, "output": 2}}))
    code, out, _ = invoke("run", *TEA, "--prices", str(prices), "--json", "--no-trace")
    assert code == 0
    assert json.loads(out)["cost"] == 0.0


def test_long_tool_output_is_kept_whole_beside_the_journal(tmp_path):
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"big": "x" * 20000}))
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "lookup", "arguments": {"key": "big"}}]},
                {"content": "done"},
            ]
        )
    )
    trace = tmp_path / "run.jsonl"
    code, _, _ = invoke(
        "run",
        "q",
        "--model",
        f"scripted:{script}",
        "--notes",
        str(notes),
        "--json",
        "--trace",
        str(trace),
    )
    assert code == 0
    kept = list((tmp_path / "run-outputs").iterdir())
    assert len(kept) == 1
    assert kept[0].read_text() == "x" * 20000
    result = next(e for e in read_journal(trace) if e["type"] == "tool_result")["result"]
    assert result["truncated"] is True and result["full_output_path"] == str(kept[0])
