"""``reactloop approve`` on a tree's root journal: the calls that wait in its sub-agents are
listed by their chained ids (with the agent they wait in), each decision goes into the
root's journal, and ``Agent.resume(trace)`` without decisions takes it down the tree: an
approved call runs once, in its agent; a denied one is answered with the reason."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import reactloop
from tests.resume.test_tree_approvals import tree

from reactloop import Journal, StopReason, read_journal


def approve(trace: Path, *args: str) -> str:
    done = reactloop("approve", str(trace), *args, "--who", "ana", cwd=trace.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout


def waiting_in_writer(trace: Path, ran: list[int]) -> None:
    """The tree run until the writer's ``bump`` waits, each call above it approved from the
    command line (no ids: every call that waits) and the tree resumed in Python."""
    with Journal(trace) as journal:
        tree(ran).run("go", journal=journal)
    assert approve(trace).startswith('call_0_0 coder {"task": "get 7 bumped"}: approved')
    assert tree(ran).resume(trace).stop_reason is StopReason.AWAITING_APPROVAL
    shown = approve(trace)
    assert shown == 'call_0_0/call_0_0 writer {"task": "bump 7"} in /coder#1: approved\n'
    assert tree(ran).resume(trace).stop_reason is StopReason.AWAITING_APPROVAL


def writer_results(folder: Path) -> list[object]:
    journal = folder / "root.coder-1.writer-1.jsonl"
    return [e["content"] for e in read_journal(journal) if e["type"] == "tool_result"]


def test_a_call_two_levels_down_approved_from_the_command_line_runs_once(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "root.jsonl"
    ran: list[int] = []
    waiting_in_writer(trace, ran)
    key = "call_0_0/call_0_0/call_0_0"
    assert approve(trace, key) == f'{key} bump {{"n": 7}} in /coder#1/writer#1: approved\n'
    assert ran == []  # approve only writes the decision
    decided = read_journal(trace)[-1]
    assert (decided["type"], decided["call_id"], decided["who"]) == ("approval", key, "ana")

    last = tree(ran).resume(trace)
    assert (last.answer, last.stop_reason, ran) == ("done", StopReason.FINAL_ANSWER, [7])
    assert ran == [7]  # once, in the writer
    assert len(writer_results(tmp_path)) == 1


def test_a_call_denied_from_the_command_line_is_answered_with_the_reason(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "root.jsonl"
    ran: list[int] = []
    waiting_in_writer(trace, ran)
    shown = approve(trace, "--deny", "not today")
    assert shown.endswith("in /coder#1/writer#1: denied (not today)\n")

    last = tree(ran).resume(trace)
    assert (last.answer, ran) == ("done", [])
    (seen,) = writer_results(tmp_path)
    assert "not today" in str(seen)
    again = reactloop("approve", str(trace), "call_0_0/call_0_0/call_0_0", cwd=tmp_path)
    assert again.returncode == 2  # the run no longer waits


def test_an_unknown_chained_id_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "root.jsonl"
    waiting_in_writer(trace, [])
    before = trace.read_bytes()
    refused = reactloop("approve", str(trace), "call_0_0/call_9_9/call_0_0", cwd=tmp_path)
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "no pending call call_0_0/call_9_9/call_0_0" in line
    assert "(pending: call_0_0/call_0_0/call_0_0)" in line
    assert trace.read_bytes() == before
