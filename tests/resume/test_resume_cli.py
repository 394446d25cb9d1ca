"""``reactloop resume`` and ``reactloop approve``, each in a process of its own: a run stops
``awaiting_approval``; another process approves one call and denies another; the resume runs
exactly the approved one; a second resume runs nothing again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import reactloop
from reactloop import read_journal


def write(path: str, content: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}


def test_deferred_approval_across_processes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    again = ["--tools", "files", "--workspace", str(workspace)]  # never from the journal
    workspace.mkdir()
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [write("a.txt", "A", "w_a"), write("b.txt", "B", "w_b")]},
        {"content": "wrote what I was allowed to"},
    ]
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    common = ["--tools", "files", "--workspace", str(workspace)]
    first = reactloop(
        "run", "write two files", "--model", f"scripted:{script.name}", *common,
        "--trace", str(trace), "--defer-approval", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    payload = json.loads(first.stdout)
    assert payload["stop_reason"] == "awaiting_approval"
    assert [(c["call_id"], c["arguments"]["path"]) for c in payload["pending"]] == [
        ("w_a", "a.txt"),
        ("w_b", "b.txt"),
    ]
    stop = read_journal(trace)[-1]
    assert stop["type"] == "stop" and [c["call_id"] for c in stop["pending"]] == ["w_a", "w_b"]
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()

    approved = reactloop("approve", str(trace), "w_a", "--who", "alice", cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    shown = 'w_a write_file {"path": "a.txt", "content": "A"}: approved'  # what will run
    assert approved.stdout.strip() == shown
    denied = reactloop("approve", str(trace), "w_b", "--deny", "not b", cwd=tmp_path)
    assert denied.returncode == 0 and "denied" in denied.stdout, denied.stderr
    unknown = reactloop("approve", str(trace), "w_zzz", cwd=tmp_path)
    assert unknown.returncode == 2 and "no pending call w_zzz" in unknown.stderr
    decisions = [e for e in read_journal(trace) if e["type"] == "approval"]
    assert [(e["call_id"], e["decision"], e["reason"]) for e in decisions] == [
        ("w_a", "approve", None),
        ("w_b", "deny", "not b"),
    ]
    assert decisions[0]["who"] == "alice" and decisions[0]["at"]

    resumed = reactloop("resume", str(trace), "--defer-approval", *again, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "wrote what I was allowed to"
    assert (workspace / "a.txt").read_text() == "A" and not (workspace / "b.txt").exists()
    events = read_journal(trace)
    results = {e["result"]["call_id"]: e["result"] for e in events if e["type"] == "tool_result"}
    assert results["w_a"]["ok"] and "not b" in results["w_b"]["error"]
    assert [e["type"] for e in events].count("resume") == 1
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "final_answer"

    (workspace / "a.txt").write_text("changed after the run")
    again = reactloop("resume", str(trace), "--defer-approval", *again, cwd=tmp_path)
    assert again.returncode == 2 and "finished" in again.stderr
    assert (workspace / "a.txt").read_text() == "changed after the run"  # nothing ran again
    assert read_journal(trace) == events


def test_a_cli_run_stopped_by_its_step_limit_resumes_with_a_raised_one(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    turns = [{"tool_calls": [{"name": "calculator", "arguments": {"expression": f"{i}+1"}}]}
             for i in range(4)] + [{"content": "four sums"}]  # fmt: skip
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "sum", "--model", f"scripted:{script}", "--tools", "calculator",
        "--trace", str(trace), "--max-steps", "2", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(first.stdout)["stop_reason"] == "max_model_calls", first.stderr
    other = tmp_path / "other.json"
    other.write_text(script.read_text())
    before = trace.read_bytes()
    refused = reactloop("resume", str(trace), "--model", f"scripted:{other}", cwd=tmp_path)
    assert refused.returncode == 2 and "recorded with model" in refused.stderr
    assert "--force" in refused.stderr and trace.read_bytes() == before
    resumed = reactloop("resume", str(trace), "--max-steps", "10", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["answer"] == "four sums" and payload["model_calls"] == 5
    assert len(refused.stderr.strip().splitlines()) == 1


def test_resume_keeps_the_recorded_way_of_approving(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    again = ["--tools", "files", "--workspace", str(workspace)]  # never from the journal
    workspace.mkdir()
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [write("a.txt", "A", "w_a")]},
        {"tool_calls": [write("b.txt", "B", "w_b")]},
        {"content": "both written"},
    ]
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "write", "--model", f"scripted:{script}", "--tools", "files",
        "--workspace", str(workspace), "--trace", str(trace), "--defer-approval", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1 and "pending: w_a write_file" in first.stderr, first.stderr
    assert reactloop("approve", str(trace), cwd=tmp_path).returncode == 0  # every pending call
    second = reactloop("resume", str(trace), "--defer-approval", *again, "--json", cwd=tmp_path)
    payload = json.loads(second.stdout)
    assert payload["stop_reason"] == "awaiting_approval", second.stderr  # w_b waits in its turn
    assert [c["call_id"] for c in payload["pending"]] == ["w_b"]
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert reactloop("approve", str(trace), "w_b", cwd=tmp_path).returncode == 0
    third = reactloop("resume", str(trace), "--defer-approval", *again, cwd=tmp_path)
    assert third.returncode == 0 and third.stdout.strip() == "both written", third.stderr
    assert (workspace / "b.txt").read_text() == "B"


def test_a_cli_resume_sends_the_request_the_uninterrupted_run_sends(tmp_path: Path) -> None:
    """The model's settings of ``reactloop run`` (here temperature, seed, the output cap and
    the base URL) are recorded and used again by ``reactloop resume``: after a wait for
    approval, the next request is byte for byte the uninterrupted run's."""
    from reactloop.testing import FakeOpenAIServer, completion, json_reply, tool_call

    def reply(request: Any) -> Any:
        if any(m["role"] == "tool" for m in request.json["messages"]):
            return json_reply(completion("done"))
        call = tool_call("write_file", {"path": "a.txt", "content": "A"}, id="w_a")
        return json_reply(completion("", tool_calls=[call]))

    bodies = {}
    for name, defer in (("straight", ()), ("waited", ("--defer-approval",))):
        folder = tmp_path / name
        (folder / "ws").mkdir(parents=True)
        with FakeOpenAIServer(responder=reply) as server:
            ran = reactloop(
                "run", "write a", "--model", "openai:fake", "--base-url", server.base_url,
                "--tools", "files", "--workspace", str(folder / "ws"), "--temperature", "0",
                "--seed", "3", "--max-output-tokens", "50", "--trace", str(folder / "run.jsonl"),
                *defer, cwd=folder,
            )  # fmt: skip
            if defer:
                assert ran.returncode == 1, ran.stderr
                assert reactloop("approve", "run.jsonl", cwd=folder).returncode == 0
                resumed = reactloop(
                    "resume",
                    "run.jsonl",
                    "--defer-approval",
                    "--tools",
                    "files",
                    "--workspace",
                    "ws",
                    "--base-url",
                    server.base_url,
                    cwd=folder,
                )
                assert resumed.returncode == 0, resumed.stderr
            else:
                assert ran.returncode == 0, ran.stderr
            bodies[name] = [r.body for r in server.requests]
    assert len(bodies["straight"]) == len(bodies["waited"]) == 2
    assert bodies["waited"] == bodies["straight"]
    assert b'"seed":3' in bodies["waited"][1] and b'"temperature":0' in bodies["waited"][1]


def test_a_resume_whose_workspace_is_gone_says_so_and_force_cannot_help(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    again = ["--tools", "files", "--workspace", str(workspace)]  # never from the journal
    workspace.mkdir()
    script = tmp_path / "script.json"
    turns = [{"tool_calls": [write("a.txt", "A", "w_a")]}, {"content": "wrote"}]
    script.write_text(json.dumps(turns), encoding="utf-8")
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "write", "--model", f"scripted:{script.name}", "--tools", "files",
        "--workspace", str(workspace), "--trace", str(trace), "--max-steps", "1", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    (workspace / "a.txt").unlink(missing_ok=True)
    workspace.rmdir()
    before = trace.read_bytes()
    for force in ([], ["--force"]):
        resumed = reactloop("resume", str(trace), *again, "--max-steps", "3", *force, cwd=tmp_path)
        assert resumed.returncode == 2
        (line,) = resumed.stderr.splitlines()
        assert f"cannot resume {trace}: the workspace {workspace} is gone" in line
        assert ("--force cannot help" in line) == bool(force)
        assert trace.read_bytes() == before
