"""Hostile input on the command line: every bad input is a one-line error (exit 2) that loses
nothing; nothing hangs, nothing ends in a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke

# JSON that json.loads refuses with a ValueError or a RecursionError, not a JSONDecodeError.
UNDECODABLE = ["1" * 5000, "[" * 100_000 + "]" * 100_000]
SCRIPT = [
    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6 * 7"}}]},
    {"content": "42"},
]


def run_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a real process, for inputs that could block it (a timeout fails the test)."""
    return subprocess.run(
        [sys.executable, "-m", "reactloop", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def script(tmp_path: Path, turns: Any = None) -> str:
    return f"scripted:{write_json(tmp_path / 'script.json', SCRIPT if turns is None else turns)}"


def recorded(tmp_path: Path, *extra: str) -> Path:
    trace = tmp_path / "run.jsonl"
    code, _, err = invoke("run", "q", "--model", script(tmp_path), "--trace", str(trace), *extra)
    assert code == 0, err
    return trace


def rewrite_events(trace: Path, change: Any) -> None:
    lines = trace.read_text(encoding="utf-8").splitlines()
    events = [lines[0], *(json.dumps(change(json.loads(line))) for line in lines[1:])]
    trace.write_text("\n".join(events) + "\n", encoding="utf-8")


def assert_one_line_usage_error(code: int, err: str) -> None:
    assert code == 2
    assert err.startswith("reactloop: error: ") and err.count("\n") == 1, err


# --- options -------------------------------------------------------------------------------


def test_empty_model_spec_is_a_usage_error_not_the_default_model(monkeypatch):
    import reactloop.models.default as default

    monkeypatch.setattr(default, "choose_default_model", lambda: ("scripted:", "the default"))
    code, _, err = invoke("run", "q", "--model", "", "--no-trace")
    assert_one_line_usage_error(code, err)
    assert "unknown model spec ''" in err


@pytest.mark.parametrize(
    "option",
    [
        ["--temperature", "nan"],
        ["--temperature", "inf"],
        ["--max-seconds", "nan"],
        ["--max-seconds", "inf"],
        ["--max-seconds", "1e300"],
        ["--max-cost", "nan"],
    ],
)
def test_non_finite_numbers_are_usage_errors(tmp_path, option):
    prices = write_json(tmp_path / "prices.json", {"scripted*": {"input": 1, "output": 1}})
    code, _, err = invoke(
        "run", "q", "--model", script(tmp_path), "--prices", str(prices), "--no-trace", *option
    )
    assert_one_line_usage_error(code, err)
    assert option[0] in err


@pytest.mark.parametrize(
    "args", [["run", "q", "--max-steps", "0"], ["run"], ["rnu"], ["view", "/no/such.jsonl"]]
)
def test_click_usage_errors_are_one_line(args):
    code, _, err = invoke(*args)
    assert_one_line_usage_error(code, err)


def test_trace_and_no_trace_together_is_a_usage_error(tmp_path):
    trace = tmp_path / "t.jsonl"
    code, _, err = invoke(
        "run", "q", "--model", script(tmp_path), "--trace", str(trace), "--no-trace"
    )
    assert_one_line_usage_error(code, err)


def test_unknown_tool_choice_is_a_usage_error(tmp_path):
    code, _, err = invoke("run", "q", "--model", script(tmp_path), "--tool-choice", "nosuch")
    assert_one_line_usage_error(code, err)
    assert "'nosuch'" in err and "calculator" in err
    code, out, _ = invoke("run", "q", "--model", script(tmp_path), "--tool-choice", "calculator")
    assert (code, out) == (0, "42\n")


# --- the journal a run writes --------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "message"),
    [(["--max-cost", "1"], "--prices"), (["--approve", "--allow", "re:("], "not a valid regex")],
)
def test_a_usage_error_does_not_overwrite_the_trace(tmp_path, option, message):
    trace = tmp_path / "old.jsonl"
    trace.write_text("keep me\n", encoding="utf-8")
    code, _, err = invoke("run", "q", "--model", script(tmp_path), "--trace", str(trace), *option)
    assert code == 2 and message in err
    assert trace.read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize("where", ["a file/x.jsonl", ".", ""])
def test_a_trace_that_cannot_be_written_is_a_usage_error(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a file").write_text("", encoding="utf-8")
    code, _, err = invoke("run", "q", "--model", script(tmp_path), "--trace", where)
    assert_one_line_usage_error(code, err)


def test_a_runs_folder_that_cannot_be_made_is_a_usage_error(tmp_path, monkeypatch):
    blocker = tmp_path / "runs"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("REACTLOOP_RUNS_DIR", str(blocker))
    code, _, err = invoke("run", "q", "--model", script(tmp_path))
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize("option", ["--model", "--notes", "--prices"])
def test_the_trace_never_overwrites_an_input_file(tmp_path, option):
    model = script(tmp_path)
    source = tmp_path / "script.json"
    if option != "--model":
        source = write_json(tmp_path / "input.json", {"scripted*": {"input": 1, "output": 1}})
    before = source.read_text(encoding="utf-8")
    args = ["run", "q", "--model", model, "--trace", str(source)]
    if option != "--model":
        args += [option, str(source)]
    code, _, err = invoke(*args)
    assert_one_line_usage_error(code, err)
    assert source.read_text(encoding="utf-8") == before


def test_the_trace_never_overwrites_the_replayed_journal(tmp_path):
    trace = recorded(tmp_path)
    before = trace.read_bytes()
    code, _, err = invoke("run", "q", "--model", f"replay:{trace}", "--trace", str(trace))
    assert_one_line_usage_error(code, err)
    assert trace.read_bytes() == before


def test_a_file_where_the_output_folder_goes_is_a_usage_error(tmp_path):
    (tmp_path / "t-outputs").write_text("", encoding="utf-8")
    trace = tmp_path / "t.jsonl"
    code, _, err = invoke("run", "q", "--model", script(tmp_path), "--trace", str(trace))
    assert_one_line_usage_error(code, err)
    assert "t-outputs" in err and not trace.exists()


class _FillingUp:
    """A journal's raw file on a disk that fills up after three lines."""

    def __init__(self, real):
        self.real, self.lines = real, 0

    def write(self, line):
        self.lines += 1
        if self.lines > 3:
            raise OSError(28, "No space left on device")
        return self.real.write(line)

    def fileno(self):
        return self.real.fileno()

    def close(self):
        self.real.close()


def test_a_journal_that_fails_midway_is_reported(tmp_path, monkeypatch):
    from reactloop.journal import writer

    opened = writer.open_own_file
    monkeypatch.setattr(writer, "open_own_file", lambda *a: _FillingUp(opened(*a)))
    trace = tmp_path / "t.jsonl"
    code, out, err = invoke("run", "q", "--model", script(tmp_path), "--trace", str(trace))
    assert (code, out) == (1, "")  # a run that cannot be journaled fails, loudly
    assert "stop: journal_error" in err
    assert "No space left on device" in err


def test_no_trace_leaves_no_empty_output_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    code, _, _ = invoke("run", "q", "--model", script(tmp_path), "--no-trace")
    assert code == 0
    assert list((tmp_path / "tmp").iterdir()) == []


# --- FIFOs, which block a reader without a writer and a writer without a reader ------------


@pytest.mark.parametrize(
    "args",
    [
        ["run", "q", "--model", "scripted:{fifo}"],
        ["run", "q", "--model", "replay:{fifo}"],
        ["run", "q", "--trace", "{fifo}"],
        ["run", "q", "--prices", "{fifo}"],
        ["run", "q", "--notes", "{fifo}"],
        ["tools", "--tools", "lookup", "--notes", "{fifo}"],
        ["view", "{fifo}"],
        ["cost", "{fifo}"],
        ["replay", "{fifo}"],
        ["view", "{trace}", "-o", "{fifo}"],
        ["view", "{trace}", "--prices", "{fifo}"],
        ["cost", "{trace}", "--prices", "{fifo}"],
        ["replay", "{trace}", "--journal", "{fifo}"],
    ],
)
def test_a_fifo_is_a_usage_error_not_a_hang(tmp_path, args):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    trace = recorded(tmp_path)
    filled = [a.format(fifo=fifo, trace=trace) for a in args]
    if filled[0] == "run" and "--model" not in filled:
        filled += ["--model", script(tmp_path)]
    completed = run_process(*filled)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr and "not a regular file" in completed.stderr


def test_replay_refuses_a_recorded_notes_file_that_is_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    trace = recorded(tmp_path)
    config = {"tools": ["lookup"], "notes": str(fifo)}
    rewrite_events(trace, lambda e: {**e, "config": config} if e["type"] == "run_start" else e)
    completed = run_process("replay", str(trace))
    assert completed.returncode == 2, completed.stderr
    assert "not a regular file" in completed.stderr


# --- the trace commands --------------------------------------------------------------------


def test_view_never_overwrites_its_journal(tmp_path):
    trace = recorded(tmp_path)
    before = trace.read_bytes()
    code, _, err = invoke("view", str(trace), "-o", str(trace))
    assert_one_line_usage_error(code, err)
    assert trace.read_bytes() == before


def test_replay_never_overwrites_the_recorded_journal(tmp_path):
    trace = recorded(tmp_path)
    before = trace.read_bytes()
    code, _, err = invoke("replay", str(trace), "--journal", str(trace))
    assert_one_line_usage_error(code, err)
    assert trace.read_bytes() == before


@pytest.mark.parametrize("where", ["a file/x.jsonl", "."])
def test_replay_journal_that_cannot_be_written_is_a_usage_error(tmp_path, monkeypatch, where):
    trace = recorded(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a file").write_text("", encoding="utf-8")
    code, _, err = invoke("replay", str(trace), "--journal", where)
    assert_one_line_usage_error(code, err)


def test_view_writes_a_page_for_text_that_is_not_unicode(tmp_path):
    trace = recorded(tmp_path)
    rewrite_events(
        trace, lambda e: {**e, "task": "bad \udcff byte"} if e["type"] == "run_start" else e
    )
    code, _, err = invoke("view", str(trace), "-o", str(tmp_path / "run.html"))
    assert code == 0, err
    assert "bad \ufffd byte" in (tmp_path / "run.html").read_text(encoding="utf-8")


def test_huge_token_counts_do_not_crash_cost_or_view(tmp_path):
    trace = recorded(tmp_path)

    def inflate(event: dict[str, Any]) -> dict[str, Any]:
        if event["type"] == "turn":
            event["turn"]["usage"]["input_tokens"] = 10**400
        if event["type"] == "stop":
            event["seconds"] = 10**400
        return event

    rewrite_events(trace, inflate)
    assert invoke("cost", str(trace), "--json")[0] == 0
    assert invoke("view", str(trace), "-o", str(tmp_path / "run.html"))[0] == 0


def test_a_price_too_large_for_a_float_is_a_usage_error(tmp_path):
    trace = recorded(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text('{"scripted*": {"input": 1' + "0" * 400 + ', "output": 1}}')
    for args in (["cost", str(trace)], ["run", "q", "--model", script(tmp_path), "--no-trace"]):
        code, _, err = invoke(*args, "--prices", str(prices))
        assert_one_line_usage_error(code, err)
        assert "input must be a number" in err


def test_replay_of_a_run_with_a_cost_limit(tmp_path):
    prices = write_json(tmp_path / "prices.json", {"scripted*": {"input": 1, "output": 1}})
    trace = recorded(tmp_path, "--prices", str(prices), "--max-cost", "1")
    code, out, err = invoke("replay", str(trace))
    assert code == 0, err
    assert out.startswith("identical") and "cost limit" in out


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("config", "calculator"),
        ("limits", [8]),
        ("limits", {"max_seconds": "soon"}),
        ("limits", {"max_tokens": 1.5}),
        ("limits", {"wind_down": "yes"}),
    ],
)
def test_replay_of_a_malformed_run_start_is_a_usage_error(tmp_path, key, value):
    trace = recorded(tmp_path)
    rewrite_events(trace, lambda e: {**e, key: value} if e["type"] == "run_start" else e)
    code, _, err = invoke("replay", str(trace))
    assert_one_line_usage_error(code, err)


def test_replay_ignores_a_malformed_tool_list_in_run_start(tmp_path):
    trace = recorded(tmp_path)
    rewrite_events(trace, lambda e: {**e, "tools": 5} if e["type"] == "run_start" else e)
    code, out, err = invoke("replay", str(trace))
    assert code == 0, err
    assert "'calculator' is in the replay but was not in the recorded run" in out


def test_an_answer_the_terminal_cannot_encode_is_escaped_not_a_crash(tmp_path):
    model = script(tmp_path, ["Action: Finish[Сколько]"])
    completed = run_process("run", "q", "--model", model, env={"PYTHONIOENCODING": "ascii"})
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "\\u0421\\u043a\\u043e\\u043b\\u044c\\u043a\\u043e\n"


# --- malformed inputs read by the models and the journal ------------------------------------


@pytest.mark.parametrize(
    "turn",
    [
        '{"usage": "lots"}',
        '{"usage": [1]}',
        '{"usage": {"input_tokens": 1e999}}',
        '{"usage": {"input_tokens": [1]}}',
        '{"tool_calls": 5}',
    ],
)
def test_a_malformed_scripted_turn_is_a_usage_error(tmp_path, turn):
    path = tmp_path / "s.json"
    path.write_text(f"[{turn}]", encoding="utf-8")
    code, _, err = invoke("run", "q", "--model", f"scripted:{path}", "--no-trace")
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize("usage", ["lots", {"input_tokens": float("inf")}])
def test_replayed_turn_with_a_malformed_usage_is_a_usage_error(tmp_path, usage):
    trace = recorded(tmp_path)

    def spoil(event: dict[str, Any]) -> dict[str, Any]:
        if event["type"] == "turn":
            event["turn"]["usage"] = usage
        return event

    rewrite_events(trace, spoil)
    code, _, err = invoke("run", "q", "--model", f"replay:{trace}", "--no-trace")
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize("value", UNDECODABLE, ids=["huge-int", "deep-nesting"])
def test_a_script_json_cannot_decode_is_a_usage_error(tmp_path, value):
    path = tmp_path / "s.json"
    path.write_text(f'[{{"content": "x", "extra": {value}}}]', encoding="utf-8")
    code, _, err = invoke("run", "q", "--model", f"scripted:{path}", "--no-trace")
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize("value", UNDECODABLE, ids=["huge-int", "deep-nesting"])
def test_a_journal_line_json_cannot_decode_is_a_usage_error(tmp_path, value):
    trace = recorded(tmp_path)
    with trace.open("a", encoding="utf-8") as journal:
        journal.write(f'{{"type": "warning", "step": 1, "n": {value}}}\n')
    code, _, err = invoke("cost", str(trace))
    assert_one_line_usage_error(code, err)


@pytest.mark.parametrize(
    "url", ["http://[::1/v1", "http://127.0.0.1:99999/v1", "http://127.0.0.1:abc/v1", "http://:80"]
)
def test_a_malformed_base_url_is_a_usage_error(url):
    code, _, err = invoke("run", "q", "--model", "openai:x", "--base-url", url)
    assert_one_line_usage_error(code, err)
    assert "invalid base URL" in err


def test_text_is_printed_as_written_not_as_emoji_codes(tmp_path):
    call = {"name": "calculator", "arguments": {"expression": "1+1"}}
    turns = [{"content": "ratio 1:m:2 :smile:", "tool_calls": [call]}, {"content": "2"}]
    model = f"scripted:{write_json(tmp_path / 's.json', turns)}"
    code, _, err = invoke("run", "q", "--model", model, "--no-trace")
    assert code == 0
    assert "ratio 1:m:2 :smile:" in err and "Ⓜ" not in err


def test_an_empty_tools_option_means_no_tools_in_run_and_in_tools(tmp_path):
    code, out, _ = invoke("tools", "--tools", "")
    assert (code, json.loads(out)) == (0, [])
    model = f"scripted:{write_json(tmp_path / 's.json', ['Action: Finish[fine]'])}"
    code, out, _ = invoke("run", "q", "--model", model, "--tools", "", "--no-trace", "--json")
    assert code == 0 and json.loads(out)["answer"] == "fine"
