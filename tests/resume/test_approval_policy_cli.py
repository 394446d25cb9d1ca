"""``reactloop resume TRACE --approve-pending`` approves and goes on in one command;
``--allow`` with ``--defer-approval`` is a policy for the rest of the run, recorded in the
journal, and in force only when the command line gives it: never read back from the journal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import invoke, script

from reactloop import read_journal


def write(path: str, content: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}


def edit(call_id: str) -> dict[str, Any]:
    arguments = {"path": "a.txt", "old_text": "A", "new_text": "AA"}
    return {"id": call_id, "name": "edit_file", "arguments": arguments}


def deferred_run(tmp_path: Path, turns: list[Any]) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    trace = tmp_path / "run.jsonl"
    code, _, err = invoke(
        "run", "write", "--model", script(tmp_path, turns), "--tools", "files",
        "--workspace", str(workspace), "--trace", str(trace), "--defer-approval",
    )  # fmt: skip
    assert code == 1 and "pending: w_a write_file" in err, err
    return trace, workspace


def again(trace: Path) -> tuple[str, ...]:
    """The run's tools and workspace, given again (resume never takes them from a journal)."""
    return ("--tools", "files", "--workspace", str(trace.parent / "ws"))


def resume(trace: Path, *options: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = invoke("resume", str(trace), "--json", *again(trace), *options)
    return code, json.loads(out) if out.strip() else {}, err


def approvals(trace: Path) -> list[dict[str, Any]]:
    return [e for e in read_journal(trace) if e["type"] == "approval"]


def test_one_command_approves_and_a_policy_lets_the_rest_of_the_run_through(
    tmp_path: Path,
) -> None:
    turns = [
        {"tool_calls": [write("a.txt", "A", "w_a")]},
        {"tool_calls": [write("b.txt", "B", "w_b")]},
        {"tool_calls": [write("c.txt", "C", "w_c")]},
        {"content": "three files"},
    ]
    trace, workspace = deferred_run(tmp_path, turns)
    code, payload, err = resume(
        trace, "--approve-pending", "--defer-approval", "--allow", "tool:write_file",
        "--who", "alice",
    )  # fmt: skip
    assert code == 0, err
    assert payload["stop_reason"] == "final_answer" and payload["answer"] == "three files"
    assert [p.read_text() for p in sorted(workspace.iterdir())] == ["A", "B", "C"]
    assert "approved: w_a write_file" in err
    decided, policy = approvals(trace)
    assert (decided["call_id"], decided["decision"], decided["who"]) == ("w_a", "approve", "alice")
    assert policy["policy"] == {"mode": "defer", "allow": ["tool:write_file"]}
    assert "call_id" not in policy and policy["who"] == "alice" and policy["at"]


def test_a_recorded_policy_is_not_in_force_unless_given_again(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [write("a.txt", "A", "w_a")]},
        {"tool_calls": [edit("e_1")]},
        {"tool_calls": [write("c.txt", "C", "w_c")]},
        {"content": "done"},
    ]
    trace, workspace = deferred_run(tmp_path, turns)
    allow = ("--allow", "tool:write_file")
    code, payload, err = resume(trace, "--approve-pending", "--defer-approval", *allow)
    assert code == 1 and [c["call_id"] for c in payload["pending"]] == ["e_1"], err

    # the journal holds the write_file policy; this command line does not give it
    code, payload, err = resume(trace, "--approve-pending", "--defer-approval")
    assert code == 1 and [c["call_id"] for c in payload["pending"]] == ["w_c"], err
    assert "--allow 'tool:write_file'" in err and "not in force" in err
    assert (workspace / "a.txt").read_text() == "AA" and not (workspace / "c.txt").exists()

    code, payload, err = resume(trace, "--approve-pending", "--defer-approval", *allow)
    assert code == 0 and payload["answer"] == "done", err
    assert (workspace / "c.txt").read_text() == "C"
    policies = [e["policy"] for e in approvals(trace) if "policy" in e]
    assert policies == [{"mode": "defer", "allow": ["tool:write_file"]}] * 2
    assert [e["call_id"] for e in approvals(trace) if "call_id" in e] == ["w_a", "e_1", "w_c"]


def test_approve_pending_keeps_asking_in_the_recorded_way(tmp_path: Path) -> None:
    turns = [{"tool_calls": [write("a.txt", "A", "w_a")]}, {"content": "done"}]
    trace, workspace = deferred_run(tmp_path, turns)
    before = trace.read_bytes()
    code, _, err = invoke("resume", str(trace), *again(trace), "--approve-pending")
    assert code == 2 and "give --approve or --defer-approval again" in err, err
    code, _, err = invoke("resume", str(trace), *again(trace), "--allow", "tool:write_file")
    assert code == 2 and "--allow needs --approve or --defer-approval" in err, err
    code, _, err = invoke(
        "resume", str(trace), *again(trace), "--defer-approval", "--allow", "re:("
    )
    assert code == 2 and "not a valid regex" in err, err
    assert trace.read_bytes() == before and not (workspace / "a.txt").exists()


def test_approve_pending_on_a_run_that_waits_for_nothing_just_goes_on(tmp_path: Path) -> None:
    turns = [{"tool_calls": [write("a.txt", "A", "w_a")]}, {"content": "done"}]
    trace, _ = deferred_run(tmp_path, turns)
    assert invoke("approve", str(trace))[0] == 0
    code, payload, err = resume(trace, "--approve-pending", "--defer-approval")
    assert code == 0 and payload["answer"] == "done", err
    assert [e["call_id"] for e in approvals(trace)] == ["w_a"]  # approved once, by approve


def test_approve_says_what_it_cannot_do(tmp_path: Path) -> None:
    code, _, err = invoke("approve", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "cannot approve" in err and "cannot resume" not in err, err


def test_run_takes_the_policy_from_the_start(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    turns = [
        {"tool_calls": [write("a.txt", "A", "w_a")]},
        {"tool_calls": [edit("e_1")]},
        {"content": "done"},
    ]
    trace = tmp_path / "run.jsonl"
    code, out, err = invoke(
        "run", "write", "--model", script(tmp_path, turns), "--tools", "files",
        "--workspace", str(workspace), "--trace", str(trace), "--defer-approval",
        "--allow", "tool:write_file", "--json",
    )  # fmt: skip
    assert code == 1 and [c["call_id"] for c in json.loads(out)["pending"]] == ["e_1"], err
    assert (workspace / "a.txt").read_text() == "A"  # allowed: it ran without a stop
    code, payload, err = resume(trace, "--approve-pending", "--defer-approval")
    assert code == 0 and payload["answer"] == "done", err
    assert "--allow 'tool:write_file'" in err and "not in force" in err
    assert (workspace / "a.txt").read_text() == "AA"
    code, _, err = invoke(
        "run", "w", "--model", script(tmp_path, turns), "--tools", "files",
        "--workspace", str(workspace), "--no-trace", "--defer-approval", "--allow", "re:(",
    )  # fmt: skip
    assert code == 2 and "not a valid regex" in err, err


def test_a_refused_resume_writes_no_decision(tmp_path: Path) -> None:
    turns = [{"tool_calls": [write("a.txt", "A", "w_a")]}, {"content": "done"}]
    trace, workspace = deferred_run(tmp_path, turns)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(turns), encoding="utf-8")
    before = trace.read_bytes()
    code, _, err = invoke(
        "resume", str(trace), *again(trace), "--model", f"scripted:{other}", "--approve-pending",
        "--defer-approval", "--allow", "tool:write_file",
    )  # fmt: skip
    assert code == 2 and "recorded with model" in err and "approved:" not in err, err
    assert trace.read_bytes() == before and not (workspace / "a.txt").exists()
