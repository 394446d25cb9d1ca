"""Agent.resume: a run continued from its journal, cut at every event boundary as a kill would
cut it (the real kills: tests/test_resume_kill.py). Each resumed run ends with one ``stop``,
no call with a recorded result runs again, an uncertain call runs again only when its tool
is read-only or idempotent or someone approves it, and the history is the uninterrupted one
apart from the marked interruptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, Journal, Limits, ScriptedModel, tool
from reactloop.errors import UsageError
from reactloop.journal.writer import read_journal
from reactloop.messages import Message, ToolCall
from reactloop.tools.base import Tool
from reactloop.tools.prepared import Defer, PreparedCall

LIMITS = Limits(max_model_calls=40, max_tool_calls=40, max_seconds=None)
UNCERTAIN = "may already have run"


class Tools:
    """A side-effect tool, an idempotent one and a read-only one, counting their runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

        @tool
        def bump(n: int) -> int:
            """Add one (a side effect).

            Args:
                n: a number
            """
            self.runs.append(f"bump {n}")
            return n + 1

        @tool(idempotent=True)
        def put(key: str) -> str:
            """Store a key (idempotent).

            Args:
                key: a key
            """
            self.runs.append(f"put {key}")
            return key

        @tool(read_only=True)
        def peek(key: str) -> str:
            """Read a key.

            Args:
                key: a key
            """
            self.runs.append(f"peek {key}")
            return key.upper()

        self.tools = [bump, put, peek]


def script(steps: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for i in range(steps):
        name, arguments = [
            ("bump", {"n": i}),
            ("put", {"key": f"k{i}"}),
            ("peek", {"key": f"p{i}"}),
        ][i % 3]
        turns.append(
            {"content": f"step {i}", "tool_calls": [{"name": name, "arguments": arguments}]}
        )
    turns.append({"content": "done"})
    return turns


def recorded(tmp_path: Path, steps: int = 6) -> tuple[Path, list[Message], list[dict[str, Any]]]:
    path = tmp_path / "full.jsonl"
    turns = script(steps)
    with Journal(path) as journal:
        result = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS).run(
            "go"
        )
    assert result.stop_reason == "final_answer"
    return path, list(result.history), turns


def cut(path: Path, lines: int, into: Path, torn: bytes = b"") -> Path:
    kept = path.read_bytes().split(b"\n")[:lines]
    into.write_bytes(b"\n".join(kept) + b"\n" + torn)
    return into


def stops_after_last_start(path: Path) -> int:
    events = read_journal(path)
    start = max(i for i, e in enumerate(events) if e["type"] == "run_start")
    return sum(e["type"] == "stop" for e in events[start:])


def without_interruptions(history: list[Message]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in history if UNCERTAIN not in m.content]


def test_a_journal_cut_at_any_event_resumes_to_the_uninterrupted_history(tmp_path: Path) -> None:
    path, history, turns = recorded(tmp_path)
    total = len(path.read_bytes().split(b"\n")) - 1
    for lines in range(2, total):  # the header and run_start at least; the stop cut off
        trace = cut(path, lines, tmp_path / f"cut{lines}.jsonl")
        before = read_journal(trace)
        results = {e["result"]["call_id"] for e in before if e["type"] == "tool_result"}
        started = {e["call_id"]: e["name"] for e in before if e["type"] == "tool_start"}
        tools = Tools()
        result = Agent(ScriptedModel(turns), tools.tools).resume(trace)
        assert result.stop_reason == "final_answer" and result.answer == "done", lines
        assert stops_after_last_start(trace) == 1
        uncertain = {i: n for i, n in started.items() if i not in results}
        rerun = [i for i, n in uncertain.items() if n in ("put", "peek")]
        expected = len(turns) - 1 - len(results) - len(uncertain) + len(rerun)
        assert len(tools.runs) == expected, lines  # nothing with a result ran again
        if not any(n == "bump" for n in uncertain.values()):
            assert [m.to_dict() for m in result.history] == [m.to_dict() for m in history]
        else:  # the one uncertain side effect was not run again: the model was told so
            assert without_interruptions(list(result.history)) == [
                m.to_dict() for m in history if m.tool_call_id not in uncertain
            ]


def test_an_uncertain_side_effect_goes_to_the_approver_with_a_note(tmp_path: Path) -> None:
    path, history, turns = recorded(tmp_path)
    lines = path.read_bytes().split(b"\n")
    first_start = next(i for i, line in enumerate(lines) if b'"tool_start"' in line)
    trace = cut(path, first_start + 1, tmp_path / "cut.jsonl")
    asked: list[tuple[str, str]] = []

    def approve(call: PreparedCall, tool: Tool, note: str | None = None) -> bool:
        asked.append((call.id, note or ""))
        return True

    tools = Tools()
    result = Agent(ScriptedModel(turns), tools.tools, approve=approve).resume(trace)
    assert result.answer == "done"
    assert UNCERTAIN in asked[0][1] and "no result recorded" in asked[0][1]
    assert tools.runs.count("bump 0") == 1  # approved: it ran again, once
    assert [m.to_dict() for m in result.history] == [m.to_dict() for m in history]
    resume = next(e for e in read_journal(trace) if e["type"] == "resume")
    assert resume["why"] == "no_stop" and resume["calls"][0]["state"] == "uncertain"


def test_a_torn_last_line_is_set_aside_and_the_run_goes_on(tmp_path: Path) -> None:
    path, history, turns = recorded(tmp_path)
    lines = path.read_bytes().split(b"\n")
    torn = lines[9][: len(lines[9]) // 2]
    trace = cut(path, 9, tmp_path / "torn.jsonl", torn=torn)
    result = Agent(ScriptedModel(turns), Tools().tools).resume(trace)
    assert result.answer == "done"
    assert (tmp_path / "torn.jsonl.torn").read_bytes() == torn + b"\n"
    resume = next(e for e in read_journal(trace) if e["type"] == "resume")
    assert resume["torn"]["bytes"] == len(torn)
    assert [m.to_dict() for m in result.history] == [m.to_dict() for m in history]


def refused(trace: Path, match: str, tools: list[Tool] | None = None) -> None:
    before = trace.read_bytes()
    agent = Agent(ScriptedModel(script(6)), Tools().tools if tools is None else tools)
    with pytest.raises(UsageError, match=match):
        agent.resume(trace)
    assert trace.read_bytes() == before  # nothing in it changed
    assert not trace.with_name(trace.name + ".torn").exists()


def test_bad_journals_are_one_clear_error_and_stay_as_they_were(tmp_path: Path) -> None:
    path, _, _ = recorded(tmp_path)
    refused(path, "finished")
    lines = path.read_bytes().split(b"\n")
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"\n".join([*lines[:4], b"{not json", *lines[5:9]]) + b"\n")
    refused(damaged, "not JSON")
    header = json.loads(lines[0])
    other = tmp_path / "v9.jsonl"
    other.write_bytes(
        b"\n".join([json.dumps({**header, "version": 9}).encode(), *lines[1:9]]) + b"\n"
    )
    refused(other, "version")
    with pytest.raises(UsageError, match="no such journal"):
        Agent(ScriptedModel(script(6)), Tools().tools).resume(tmp_path / "absent.jsonl")


def test_a_journal_still_being_written_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "live.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(["hello"]), [], journal=journal, protocol="text")
        refused(trace, "live process")


def test_other_tools_or_model_are_refused_unless_forced(tmp_path: Path) -> None:
    path, _, turns = recorded(tmp_path)
    trace = cut(path, 12, tmp_path / "cut.jsonl")
    refused(trace, "tools differ", tools=Tools().tools[:2])
    model = ScriptedModel(turns, name="another")
    with pytest.raises(UsageError, match="model"):
        Agent(model, Tools().tools).resume(trace)
    assert Agent(model, Tools().tools).resume(trace, force=True).answer == "done"


def test_limits_raised_on_resume_count_the_run_so_far(tmp_path: Path) -> None:
    turns = script(6)
    trace = tmp_path / "limited.jsonl"
    limits = Limits(max_model_calls=3, max_tool_calls=40, max_seconds=None, wind_down=False)
    with Journal(trace) as journal:
        first = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=limits).run("go")
    assert first.stop_reason == "max_model_calls" and first.model_calls == 3
    tools = Tools()
    raised = Limits(max_model_calls=5, max_tool_calls=40, max_seconds=None, wind_down=False)
    second = Agent(ScriptedModel(turns), tools.tools).resume(trace, limits=raised)
    assert second.stop_reason == "max_model_calls" and second.model_calls == 5
    third = Agent(ScriptedModel(turns), Tools().tools).resume(trace, limits=LIMITS)
    assert third.answer == "done" and third.model_calls == 7 and third.tool_calls == 6
    events = read_journal(trace)
    assert [e["why"] for e in events if e["type"] == "resume"] == [
        "max_model_calls",
        "max_model_calls",
    ]
    assert events[-1]["type"] == "stop" and events[-1]["stop_reason"] == "final_answer"
    results = [e["result"]["call_id"] for e in events if e["type"] == "tool_result"]
    executed = [e for e in events if e["type"] == "tool_result" and e["result"]["executed"]]
    assert len(executed) == 6 and len(set(results)) == 6


def test_a_deferred_call_waits_and_runs_once_when_approved(tmp_path: Path) -> None:
    turns = script(3)
    trace = tmp_path / "deferred.jsonl"

    def later(call: PreparedCall, tool: Tool) -> Defer:
        return Defer()

    tools = Tools()
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), tools.tools, journal=journal, limits=LIMITS)
        agent.approve = later
        first = agent.run("go")
    assert first.stop_reason == "awaiting_approval" and first.answer is None
    assert [(c.name, c.arguments) for c in first.pending] == [("bump", {"n": 0})]
    assert tools.runs == []
    stop = read_journal(trace)[-1]
    assert stop["pending"] == [c.to_dict() for c in first.pending]
    pending_id = first.pending[0].id
    second = Agent(ScriptedModel(turns), tools.tools, approve=later).resume(
        trace, decisions={pending_id: True}
    )  # the approved call runs; the next call with side effects waits in its turn
    assert second.stop_reason == "awaiting_approval" and tools.runs == ["bump 0"]
    assert [c.name for c in second.pending] == ["put"]
    third = Agent(ScriptedModel(turns), tools.tools, approve=later).resume(
        trace, decisions={second.pending[0].id: True}
    )
    assert third.answer == "done" and tools.runs == ["bump 0", "put k1", "peek p2"]
    assert third.model_calls == 4 and third.tool_calls == 3
    approvals = [e for e in read_journal(trace) if e["type"] == "approval"]
    assert [e["call_id"] for e in approvals] == [pending_id, second.pending[0].id]
    assert approvals[0]["who"] == "Agent.resume"
    with pytest.raises(UsageError, match="finished"):
        Agent(ScriptedModel(turns), tools.tools).resume(trace)
    assert tools.runs == ["bump 0", "put k1", "peek p2"]


def test_a_denied_call_is_answered_with_the_reason_and_never_runs(tmp_path: Path) -> None:
    turns = script(2)
    trace = tmp_path / "denied.jsonl"
    tools = Tools()
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), tools.tools, journal=journal, limits=LIMITS)
        agent.approve = lambda call, tool: Defer()
        pending = agent.run("go").pending[0].id
    result = Agent(ScriptedModel(turns), tools.tools).resume(
        trace, decisions={pending: "the counter is frozen"}
    )
    assert result.answer == "done" and tools.runs == ["put k1"]
    answer = next(m for m in result.history if m.tool_call_id == pending)
    assert "the counter is frozen" in answer.content


def test_view_cost_and_replay_read_a_resumed_run_as_one_run(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reactloop.cli import main
    from reactloop.replay import replay

    turns = script(4)
    trace = tmp_path / "resumed.jsonl"
    tight = Limits(max_model_calls=2, max_tool_calls=40, max_seconds=None, wind_down=False)
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=tight).run("go")
    Agent(ScriptedModel(turns), Tools().tools).resume(trace, limits=LIMITS)
    page = tmp_path / "page.html"
    viewed = CliRunner().invoke(main, ["view", str(trace), "-o", str(page)])
    assert viewed.exit_code == 0, viewed.output
    html = page.read_text(encoding="utf-8")
    assert "resumed after it stopped max_model_calls" in html and "final_answer" in html
    cost = CliRunner().invoke(main, ["cost", str(trace), "--json"])
    assert cost.exit_code == 0, cost.output
    report = json.loads(cost.stdout)
    assert [r["stop_reason"] for r in report["runs"]] == ["final_answer"]
    assert [(r["why"], r["step"]) for r in report["resumes"]] == [("max_model_calls", 2)]
    text = CliRunner().invoke(main, ["cost", str(trace)])
    assert "resumed 1 time(s) (after: max_model_calls)" in text.stdout
    replayed = replay(trace, tools=Tools().tools)
    assert replayed.identical and replayed.result is not None
    assert replayed.result.answer == "done"


def test_repeats_are_counted_across_a_resume(tmp_path: Path) -> None:
    same = {"name": "peek", "arguments": {"key": "a"}}
    turns: list[dict[str, Any]] = [{"tool_calls": [same]} for _ in range(3)] + [
        {"content": "gave up"}
    ]
    path = tmp_path / "full.jsonl"
    with Journal(path) as journal:
        full = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS).run("go")
    assert full.stop_reason == "loop_detected"
    lines = path.read_bytes().split(b"\n")
    results = [i for i, line in enumerate(lines) if b'"type":"tool_result"' in line]
    for after in results[:2]:  # cut after the first, then the second identical call
        trace = cut(path, after + 1, tmp_path / f"cut{after}.jsonl")
        resumed = Agent(ScriptedModel(turns), Tools().tools).resume(trace)
        assert resumed.stop_reason == "loop_detected" and resumed.answer == "gave up"
        assert [m.to_dict() for m in resumed.history] == [m.to_dict() for m in full.history]


def test_a_missing_workspace_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    trace = tmp_path / "ws.jsonl"
    turns = script(2)
    with Journal(trace) as journal:
        agent = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS)
        agent.config = {"workspace": str(workspace)}
        agent.run("go")
    lines = trace.read_bytes().split(b"\n")
    trace.write_bytes(b"\n".join(lines[:5]) + b"\n")
    workspace.rmdir()
    refused(trace, "workspace .* is missing")


def test_the_terminal_approver_shows_the_note_and_no_rule_skips_it() -> None:
    import io

    from reactloop import TerminalApprover
    from reactloop.tools.prepared import prepare

    bump = Tools().tools[0]
    call = prepare(ToolCall(id="c1", name="bump", arguments='{"n": 1}'), bump, "")
    shown = io.StringIO()
    approver = TerminalApprover(["tool:bump"], input=io.StringIO("n\n"), output=shown)
    assert approver(call, bump) is True  # the rule lets it through without a note
    answer = approver(call, bump, note="this call may already have run (started at 12:00)")
    assert answer == "declined by the user"
    assert "note: this call may already have run (started at 12:00)" in shown.getvalue()


@pytest.mark.parametrize(
    ("tight", "reason"),
    [
        ({"max_tool_calls": 2}, "max_tool_calls"),
        ({"max_tokens": 25}, "max_tokens"),
    ],
)
def test_a_run_stopped_by_a_limit_goes_on_under_a_raised_one(
    tmp_path: Path, tight: dict[str, Any], reason: str
) -> None:
    turns = script(4)
    for turn in turns:
        turn["usage"] = {"input_tokens": 8, "output_tokens": 2}
    trace = tmp_path / "limited.jsonl"
    limits = Limits(max_seconds=None, wind_down=False, **tight)
    with Journal(trace) as journal:
        first = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=limits).run("go")
    assert first.stop_reason == reason
    tools = Tools()
    second = Agent(ScriptedModel(turns), tools.tools).resume(trace, limits=LIMITS)
    assert second.answer == "done" and second.tool_calls == 4 and second.model_calls == 5
    assert second.usage.total_tokens == 50  # the tokens so far are carried over
    events = read_journal(trace)
    executed = [e for e in events if e["type"] == "tool_result" and e["result"]["executed"]]
    assert len(executed) == 4 == len({e["result"]["call_id"] for e in executed})


def test_the_viewer_shows_a_call_run_again_on_resume_once(tmp_path: Path) -> None:
    from reactloop.viewer.page_data import build_views

    path, _, turns = recorded(tmp_path)
    lines = path.read_bytes().split(b"\n")
    put_start = next(
        i for i, line in enumerate(lines) if b'"tool_start"' in line and b"put" in line
    )
    trace = cut(path, put_start + 1, tmp_path / "cut.jsonl")  # killed while put ran
    Agent(ScriptedModel(turns), Tools().tools).resume(trace)
    (view,) = build_views(read_journal(trace))
    tools = [tool for step in view.steps for tool in step.tools]
    assert [t.name for t in tools] == ["bump", "put", "peek"] * 2
    assert all(t.ok for t in tools)
    resumed = [w for step in view.steps for w in step.warnings if w.kind == "resumed"]
    assert len(resumed) == 1 and "put: uncertain" in resumed[0].message


def test_a_run_that_timed_out_goes_on_with_more_time(tmp_path: Path) -> None:
    import time

    @tool(bounded=True)
    def slow(n: int) -> int:
        """Return n once the run's 50 ms are over (it waits on the clock, no sleep).

        Args:
            n: a number
        """
        ends = time.monotonic() + 0.06
        while time.monotonic() < ends:
            pass
        return n

    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "slow", "arguments": {"n": 1}}]},
        {"content": "done"},
    ]
    trace = tmp_path / "slow.jsonl"
    with Journal(trace) as journal:
        limits = Limits(max_seconds=0.05)
        first = Agent(ScriptedModel(turns), [slow], journal=journal, limits=limits).run("go")
    assert first.stop_reason == "timeout"
    again = Agent(ScriptedModel(turns), [slow]).resume(trace)
    assert again.stop_reason == "timeout"  # the time it had run counts against its limit
    more = Agent(ScriptedModel(turns), [slow]).resume(trace, limits=Limits(max_seconds=600))
    assert more.answer == "done" and more.tool_calls == 1 and more.seconds >= 0.05


def test_a_reply_cut_off_and_an_empty_one_resume_with_their_notices(tmp_path: Path) -> None:
    turns: list[Any] = [
        {"content": "I will sta", "finish_reason": "length"},
        {"content": ""},  # an empty reply: a format notice
        *script(2),
    ]
    path = tmp_path / "full.jsonl"
    limits = Limits(max_model_calls=40, max_tool_calls=40, max_seconds=None)
    with Journal(path) as journal:
        full = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=limits).run("go")
    assert full.answer == "done"
    assert {m.kind for m in full.history} >= {"truncated", "format_error"}
    lines = path.read_bytes().split(b"\n")
    for keep in range(2, len(lines) - 2):
        trace = cut(path, keep, tmp_path / f"cut{keep}.jsonl")
        resumed = Agent(ScriptedModel(turns), Tools().tools).resume(trace)
        assert resumed.answer == "done", keep
        kept = [m.to_dict() for m in resumed.history if UNCERTAIN not in m.content]
        told = {m.tool_call_id for m in resumed.history if UNCERTAIN in m.content}
        assert kept == [m.to_dict() for m in full.history if m.tool_call_id not in told], keep


def test_the_calls_of_a_reply_cut_off_are_refused_after_a_resume_too(tmp_path: Path) -> None:
    cut_off = {"tool_calls": [{"name": "bump", "arguments": {"n": 9}}], "finish_reason": "length"}
    turns: list[Any] = [cut_off, *script(1)]
    path = tmp_path / "full.jsonl"
    with Journal(path) as journal:
        full = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS).run("go")
    lines = path.read_bytes().split(b"\n")
    turn_line = next(i for i, line in enumerate(lines) if b'"type":"turn"' in line)
    tools = Tools()
    trace = cut(path, turn_line + 1, tmp_path / "cut.jsonl")  # killed right after the turn
    resumed = Agent(ScriptedModel(turns), tools.tools).resume(trace)
    assert "bump 9" not in tools.runs and resumed.answer == "done"
    assert [m.to_dict() for m in resumed.history] == [m.to_dict() for m in full.history]


@pytest.mark.parametrize("calls", [1, 2], ids=["one-call", "two-calls"])
def test_a_loop_found_just_before_the_kill_still_stops_the_run(tmp_path: Path, calls: int) -> None:
    """Killed once the guard had stopped the run (the third identical call refused, and the
    call after it), before or during the model's last word: the resumed run refuses what was
    left and gives that last word, to the same stop."""
    same = [{"name": "peek", "arguments": {"key": key}} for key in "ab"][:calls]
    turns: list[dict[str, Any]] = [{"tool_calls": same} for _ in range(3)] + [
        {"content": "gave up"}
    ]
    path = tmp_path / "full.jsonl"
    with Journal(path) as journal:
        full = Agent(ScriptedModel(turns), Tools().tools, journal=journal, limits=LIMITS).run("go")
    assert full.stop_reason == "loop_detected"
    lines = path.read_bytes().split(b"\n")
    found = min(i for i, line in enumerate(lines) if b"not run: loop detected" in line)
    for after in range(found, len(lines) - 2):  # up to the stop, cut off
        trace = cut(path, after + 1, tmp_path / f"cut{after}.jsonl")
        resumed = Agent(ScriptedModel(turns), Tools().tools).resume(trace)
        assert (resumed.stop_reason, resumed.answer) == ("loop_detected", "gave up"), after
        assert resumed.error == full.error and resumed.forced == full.forced
        assert [m.to_dict() for m in resumed.history] == [m.to_dict() for m in full.history]
        assert stops_after_last_start(trace) == 1
