"""``reactloop logs``: every journal in the runs folder (or the places given), newest first, one
line each; a damaged or foreign file is a line saying so; ``--last`` shows a run's steps."""

from __future__ import annotations

import json
import os
from pathlib import Path

from chat_journals import ANSWERS, INPUTS, QUESTIONS, chat_journal
from helpers import invoke, script
from reactloop.journal.events import Event
from reactloop.journal.writer import Journal

SCRIPT = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]}, "5"]
USAGE = {"input_tokens": 100, "output_tokens": 20}


def _run(folder: Path, task: str, when: int, turns: list[object] = SCRIPT, *options: str) -> Path:
    """A real run's journal in ``folder``, its modification time set to ``when``."""
    trace = folder / f"{task.split()[0]}.jsonl"
    spec = script(folder, turns)
    code, _, err = invoke(
        task, "--model", spec, "--protocol", "native", "--trace", str(trace), *options
    )
    assert code in (0, 1, 3), err
    os.utime(trace, (when, when))
    return trace


def _lines(out: str) -> list[str]:
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["WHEN", "MODEL", "TASK", "STOP"]
    return rows


def test_the_runs_folder_newest_first_with_every_field(runs_dir: Path) -> None:
    used = [{**turn, "usage": USAGE} if isinstance(turn, dict) else turn for turn in SCRIPT]
    older = _run(runs_dir, "older task", 1_000_000_000)
    newer = _run(runs_dir, "newer task with\nnewlines", 1_700_000_000, used)
    code, out, err = invoke("logs")
    assert code == 0, err
    first, second = _lines(out)
    assert first.endswith(str(newer)) and second.endswith(str(older))
    assert "newer task with newlines" in first  # one line each
    fields = first.split()
    assert "scripted:script.json" in fields and "final_answer" in fields
    assert "2/1" in fields and "120" in fields  # model/tool calls; tokens in + out
    assert second.split()[-5:-1] == ["2/1", "-", "-", second.split()[-2]]  # no tokens, no cost


def test_n_query_and_json(runs_dir: Path) -> None:
    _run(runs_dir, "alpha question", 1_000_000_000)
    _run(runs_dir, "beta question", 1_100_000_000, ["the BETA answer"])
    code, out, _ = invoke("logs", "-n", "1")
    assert code == 0 and len(_lines(out)) == 1 and "beta question" in out
    code, out, _ = invoke("logs", "-q", "ALPHA")
    assert [row.split()[3] for row in _lines(out)] == ["alpha"]
    code, out, _ = invoke("logs", "-q", "beta answer", "--json")  # answers are searched too
    (entry,) = json.loads(out)
    assert entry["task"] == "beta question" and entry["answer"] == "the BETA answer"
    assert entry["stop_reason"] == "final_answer" and entry["model_calls"] == 1
    assert entry["journal"].endswith("beta.jsonl") and entry["modified"].startswith("2004-")
    code, out, _ = invoke("logs", "-q", "no such text", "--json")
    assert (code, json.loads(out)) == (0, [])


def test_damaged_and_foreign_files_are_lines_not_crashes(runs_dir: Path) -> None:
    good = _run(runs_dir, "good run", 1_000_000_000)
    lines = good.read_text(encoding="utf-8").splitlines(keepends=True)
    damaged = runs_dir / "damaged.jsonl"
    damaged.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[3:]), encoding="utf-8")
    (runs_dir / "foreign.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (runs_dir / "empty.jsonl").write_bytes(b"")
    code, out, err = invoke("logs")
    assert code == 0, err
    rows = {row.split()[2].rstrip(":"): row for row in _lines(out)}
    assert f"{damaged}: unreadable: line 4: not JSON" in rows[str(damaged)]
    assert rows[str(runs_dir / "foreign.jsonl")].endswith("unreadable: line 1: not a journal event")
    assert rows[str(runs_dir / "empty.jsonl")].endswith(
        "not a reactloop journal (no complete line)"
    )
    assert rows["scripted:script.json"].endswith(str(good))


def test_last_shows_the_steps_or_the_path(runs_dir: Path) -> None:
    _run(runs_dir, "first run", 1_000_000_000)
    newest = _run(runs_dir, "second run", 1_100_000_000)
    code, out, _ = invoke("logs", "--last")
    assert code == 0
    assert "Step 1" in out and 'Act     calculator({"expression": "2+3"})' in out
    assert "Observe 5" in out and "stop: final_answer · 2 model calls · 1 tool calls" in out
    assert out.splitlines()[-2:] == ["5", f"trace: {newest}"]
    assert invoke("logs", "--last", "--path") == (0, f"{newest}\n", "")
    code, out, _ = invoke("logs", "--last", "--json", "-q", "first")
    assert json.loads(out)["task"] == "first run"


def test_last_without_a_run_exits_1_and_path_needs_last(tmp_path: Path) -> None:
    (tmp_path / "foreign.jsonl").write_text("hello\n", encoding="utf-8")
    assert invoke("logs", "--last", str(tmp_path)) == (1, "", "reactloop: no run found\n")
    code, _, err = invoke("logs", "--path")
    assert (code, err) == (2, "reactloop: error: --path goes with --last\n")
    code, _, err = invoke("logs", str(tmp_path / "missing"))
    assert code == 2 and "no such journal or folder" in err


def test_a_missing_runs_folder_is_said(runs_dir: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("REACTLOOP_RUNS_DIR", str(runs_dir / "none"))
    code, out, err = invoke("logs")
    assert (code, out) == (0, "")
    assert f"no runs folder {runs_dir / 'none'}/ yet" in err


def test_a_chat_sums_its_turns_and_a_folder_is_searched_at_any_depth(tmp_path: Path) -> None:
    """An eval's --out keeps journals under traces/: a folder argument finds them."""
    nested = tmp_path / "eval" / "traces"
    nested.mkdir(parents=True)
    trace = chat_journal(nested)
    code, out, _ = invoke("logs", str(tmp_path / "eval"), "--json")
    (entry,) = json.loads(out)
    assert entry["journal"] == str(trace) and entry["turns"] == len(QUESTIONS)
    assert entry["task"] == QUESTIONS[0] and entry["answer"] == ANSWERS[-1]
    assert entry["model_calls"] == sum(len(calls) for calls in INPUTS) and entry["tool_calls"] == 1
    assert entry["tokens"] == sum(map(sum, INPUTS)) + 7 * entry["model_calls"]
    code, out, _ = invoke("logs", str(tmp_path), "-q", ANSWERS[1], "--json")
    assert code == 0 and len(json.loads(out)) == 1  # the second turn's answer


def test_a_resumed_run_counts_once_and_an_open_journal_is_running(tmp_path: Path) -> None:
    two_calls = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}]}]
    trace = _run(tmp_path, "stopped run", 1, [*two_calls, *SCRIPT], "--max-steps", "1")
    code, _, err = invoke("resume", str(trace), "--max-steps", "8")
    assert code == 0, err
    code, out, _ = invoke("logs", str(trace), "--json")
    (entry,) = json.loads(out)
    assert (entry["stop_reason"], entry["turns"], entry["answer"]) == ("final_answer", 1, "5")
    assert (entry["model_calls"], entry["tool_calls"]) == (3, 2)  # the last stop: totals
    live = tmp_path / "live.jsonl"
    with Journal(live) as journal:
        journal(Event("run_start", 0, {"task": "still going", "model": "m"}))
        code, out, _ = invoke("logs", str(live), "--json")
        assert json.loads(out)[0]["stop_reason"] == "running"
    code, out, _ = invoke("logs", str(live), "--json")
    assert json.loads(out)[0]["stop_reason"] == "no stop (killed?)"
