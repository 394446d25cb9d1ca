"""The journal: every event type survives a round trip, a torn last line is skipped, and a run
killed with SIGKILL leaves a journal whose complete lines all parse."""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop import Agent, FunctionModel, Journal, ModelRequest, ScriptedModel, tool
from reactloop.errors import JournalError
from reactloop.journal.events import EVENT_TYPES, Event
from reactloop.journal.writer import read_journal
from reactloop.messages import Message, ModelTurn, ToolCall, ToolResult, Usage

HOSTILE = 'line\nbreak "quote" \\ back </script> \u2028 \x00 emoji 🙂 кириллица'

SAMPLES: dict[str, dict[str, Any]] = {
    "run_start": {
        "task": HOSTILE,
        "model": "m",
        "protocol": "native",
        "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"}}],
        "limits": {"max_model_calls": 8},
        "instructions": None,
        "config": {"tools": ["t"]},
    },
    "request": {
        "n_messages": 2,
        "messages_new": [Message(role="user", content=HOSTILE).to_dict()],
        "tool_choice": "auto",
        "wind_down": False,
    },
    "response": {"raw": {"choices": [{"message": {"content": HOSTILE}}]}, "request": {"n": 1}},
    "turn": {
        "turn": ModelTurn(
            text=HOSTILE,
            reasoning="r",
            tool_calls=(ToolCall(id="c1", name="t", arguments='{"x": 1', wire_id=""),),
            finish_reason="tool_calls",
            usage=Usage(input_tokens=10, output_tokens=5, cached_tokens=3, reasoning_tokens=1),
        ).to_dict()
    },
    "tool_call": {"call": ToolCall(id="c1", name="t", arguments=HOSTILE).to_dict()},
    "tool_start": {"call_id": "c1", "name": "t", "arguments": HOSTILE},
    "tool_search": {"queries": [HOSTILE], "matches": [["t"]], "revealed": ["t"]},
    "skill_activation": {"name": "pdf", "again": False, "folder": HOSTILE},
    "tool_result": {
        "result": ToolResult(
            call_id="c1", name="t", ok=False, error=HOSTILE, executed=False, seconds=0.25
        ).to_dict(),
        "content": ToolResult(call_id="c1", name="t", ok=False, error=HOSTILE).to_content(),
    },
    "warning": {"kind": "repeat", "message": HOSTILE, "call_id": "c1"},
    "compaction": {
        "policy": "trim",
        "start": 2,
        "replaced": 2,
        "call_ids": ["c1"],
        "by": [Message(role="user", content=HOSTILE, kind="trimmed").to_dict()],
        "tokens_before": 900,
        "tokens_after": 300,
        "limit": 1000,
    },
    "check": {"kind": "verify", "passed": False, "output": HOSTILE},
    "budget_notice": {"line": HOSTILE},
    "resume": {
        "why": "no_stop",
        "from_step": 3,
        "calls": [{"call_id": "c1", "name": "t", "state": "uncertain", "started_at": HOSTILE}],
        "torn": None,
    },
    "elicitation": {
        "server": "shows",
        "call_id": "c1",
        "message": HOSTILE,
        "form": {"type": "object", "properties": {"seats": {"type": "integer"}}},
        "action": "accept",
        "content": {"seats": 3, "note": HOSTILE},
        "omitted": ["pin"],
    },
    "approval": {
        "call_id": "c1",
        "decision": "deny",
        "reason": HOSTILE,
        "who": "me",
        "at": "2026-01-01T00:00:00+00:00",
    },
    "child_start": {"agent_path": "root/ask#1", "tool": "ask", "task": HOSTILE, "trace": "c.jsonl"},
    "child_stop": {
        "agent_path": "root/ask#1",
        "stop_reason": "final_answer",
        "forced": False,
        "model_calls": 2,
        "tool_calls": 1,
        "usage": Usage().to_dict(),
        "cost": None,
        "trace": "c.jsonl",
    },
    "stop": {
        "stop_reason": "final_answer",
        "answer": HOSTILE,
        "error": None,
        "model_calls": 1,
        "tool_calls": 0,
        "usage": Usage().to_dict(),
        "seconds": 0.5,
    },
}


def test_samples_cover_every_event_type() -> None:
    assert set(SAMPLES) == set(EVENT_TYPES)


@pytest.mark.parametrize("fsync", [False, True])
def test_every_event_type_round_trips(tmp_path: Path, fsync: bool) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fsync=fsync) as journal:
        for step, kind in enumerate(EVENT_TYPES):
            journal(Event(type=kind, step=step, data=SAMPLES[kind]))
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["format"] == "reactloop-journal" and header["version"] == 1
    events = read_journal(path)
    assert [e["type"] for e in events] == list(EVENT_TYPES)
    for step, event in enumerate(events):
        assert event["step"] == step and isinstance(event["t"], float)
        assert {k: v for k, v in event.items() if k not in ("type", "step", "t")} == SAMPLES[
            event["type"]
        ]
    by_type = {e["type"]: e for e in events}
    assert ModelTurn.from_dict(by_type["turn"]["turn"]).to_dict() == SAMPLES["turn"]["turn"]
    assert ToolResult.from_dict(by_type["tool_result"]["result"]).error == HOSTILE
    assert Message.from_dict(by_type["request"]["messages_new"][0]).content == HOSTILE


@tool(read_only=True)
def echo(text: str) -> str:
    """Echo the text.

    Args:
        text: anything
    """
    return text


def test_a_real_run_journals_every_event_type(tmp_path: Path) -> None:
    same = {"name": "echo", "arguments": {"text": "a"}}
    model = ScriptedModel([{"tool_calls": [same]}, {"tool_calls": [same]}, {"content": "done"}])
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        result = Agent(model, [echo], journal=journal).run("echo a twice")
    events = read_journal(path)
    # compaction, check and budget_notice come only with the features that make them
    # (tests/test_compaction.py, test_premature_stop.py, test_budget_notices.py), resume
    # with a resumed run (tests/test_resume.py), tool_search with deferred tools
    # (tests/tools/test_tool_search.py), skill_activation with skills (test_skills.py), the
    # child events with sub-agents (tests/loop/test_subagents.py), elicitation with an MCP
    # server's question (tests/tools/mcp/test_mcp_elicitation_deferred.py).
    optional = {"compaction", "check", "budget_notice", "resume", "approval", "elicitation"}
    optional |= {"tool_search", "skill_activation", "child_start", "child_stop"}
    assert {e["type"] for e in events} == set(EVENT_TYPES) - optional
    assert events[0]["type"] == "run_start" and events[-1]["type"] == "stop"
    assert events[-1]["answer"] == result.answer == "done"
    assert any(e["type"] == "warning" and e["kind"] == "repeat" for e in events)
    times = [e["t"] for e in events]
    assert times == sorted(times)


@tool(read_only=True)
def odd_numbers(kind: str) -> Any:
    """Numbers JSON has no spelling for.

    Args:
        kind: "one" for a single NaN, anything else for a mix
    """
    if kind == "one":
        return float("nan")
    return {"mean": float("nan"), "max": float("inf"), "values": [1.5, -float("inf")]}


def test_nan_and_infinities_are_journaled_as_they_were(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ModelTurn(
                tool_calls=(ToolCall(id="a", name="odd_numbers", arguments='{"kind": "x"}'),)
            ),
            ModelTurn(
                tool_calls=(ToolCall(id="b", name="odd_numbers", arguments='{"kind": "one"}'),),
                raw_message={"score": float("-inf")},
            ),
            ModelTurn(text="done"),
        ]
    )
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        Agent(model, [odd_numbers], journal=journal).run("q")
    events = read_journal(path)
    mixed, single = [e for e in events if e["type"] == "tool_result"]
    output = mixed["result"]["output"]
    assert math.isnan(output["mean"]) and output["max"] == math.inf
    assert output["values"] == [1.5, -math.inf] and "NaN" in mixed["content"]
    assert math.isnan(single["result"]["output"])
    turns = [e["turn"] for e in events if e["type"] == "turn"]
    assert turns[1]["raw_message"] == {"score": -math.inf}
    requests = [e for e in events if e["type"] == "request"]
    assert requests[2]["messages_new"][0]["raw"] == {"score": -math.inf}


def test_a_lone_surrogate_in_a_tool_output_is_journaled(tmp_path: Path) -> None:
    text = b"caf\xe9".decode("utf-8", "surrogateescape")
    turns = [{"tool_calls": [{"name": "echo", "arguments": {"text": text}}]}, {"content": "ok"}]
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        result = Agent(ScriptedModel(turns), [echo], journal=journal).run("q")
    assert result.answer == "ok" and not result.warnings
    outputs = [e["result"]["output"] for e in read_journal(path) if e["type"] == "tool_result"]
    assert outputs == [text]


def test_every_event_is_on_disk_before_each_model_call_and_tool_run(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    seen: list[tuple[str, list[str]]] = []

    def on_disk() -> list[str]:
        return [event["type"] for event in read_journal(path)]

    @tool
    def probe(n: int) -> int:
        """Note what the journal holds while a tool runs (a tool with side effects).

        Args:
            n: anything
        """
        seen.append(("tool", on_disk()))
        return n

    def reply(request: ModelRequest) -> ModelTurn:
        seen.append(("model", on_disk()))
        if request.step > 3:
            return ModelTurn(text="done")
        arguments = json.dumps({"n": request.step})
        return ModelTurn(
            tool_calls=(ToolCall(id=f"c{request.step}", name="probe", arguments=arguments),)
        )

    with Journal(path) as journal:
        assert Agent(FunctionModel(reply), [probe], journal=journal).run("q").answer == "done"
    final = on_disk()
    assert [where for where, _ in seen] == ["model", "tool"] * 3 + ["model"]
    for where, kinds in seen:
        assert kinds == final[: len(kinds)]
        assert kinds[-1] == ("request" if where == "model" else "tool_start")  # write-ahead
    assert [kinds.count("tool_result") for where, kinds in seen if where == "model"] == [0, 1, 2, 3]


def test_torn_last_line_is_skipped_at_every_cut(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        for step, kind in enumerate(EVENT_TYPES):
            journal(Event(type=kind, step=step, data=SAMPLES[kind]))
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    torn = tmp_path / "torn.jsonl"
    for cut in range(last_start + 1, len(data) - 1):
        if _inside_a_character(data, cut):
            continue  # covered by the next test
        torn.write_bytes(data[:cut])
        events = read_journal(torn)
        assert [e["type"] for e in events] == list(EVENT_TYPES[:-1]), cut


def test_a_tear_inside_a_multibyte_character_is_skipped(tmp_path: Path) -> None:
    """Long lines are written in several chunks, so a kill can split a UTF-8 character."""
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        journal(Event(type="run_start", step=0, data={}))
        journal(Event(type="stop", step=1, data={"answer": "🙂" * 3}))
    data = path.read_bytes()
    cut = data.index("🙂".encode()) + 2
    assert _inside_a_character(data, cut)
    path.write_bytes(data[:cut])
    assert [e["type"] for e in read_journal(path)] == ["run_start"]


def _inside_a_character(data: bytes, cut: int) -> bool:
    return 0x80 <= data[cut] <= 0xBF


def test_a_broken_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        journal(Event(type="run_start", step=0, data={}))
    path.write_text(
        path.read_text(encoding="utf-8") + "{oops\n" + '{"type": "stop"}\n', encoding="utf-8"
    )
    with pytest.raises(JournalError, match=r":3: not JSON"):
        read_journal(path)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"type": "x", "v": ' + "[" * 100_000 + "}", "nested deeper than 254"),
        ('{"type": "x", "v": ' + "7" * 5000 + "}", "Exceeds the limit"),
        ('{"type": "x", "v": "\\ud83d\\ude00" ' + "[" * 300 + "}", "nested deeper"),
    ],
    ids=["deep", "huge-int", "deep-with-surrogates"],
)
def test_a_hostile_line_is_a_journal_error_not_a_raw_exception(
    tmp_path: Path, line: str, why: str
) -> None:
    path = tmp_path / "run.jsonl"
    with Journal(path) as journal:
        journal(Event(type="run_start", step=0, data={}))
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    with pytest.raises(JournalError, match=f":3: not JSON .*{why}"):
        read_journal(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(
    data=st.dictionaries(
        st.text().filter(lambda k: k not in ("type", "step", "t")), json_values, max_size=5
    ),
    cut=st.integers(min_value=1),
)
def test_any_json_data_round_trips_and_any_tear_is_skipped(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any], cut: int
) -> None:
    path = tmp_path_factory.mktemp("j") / "j.jsonl"
    with Journal(path) as journal:
        journal(Event(type="warning", step=1, data=data))
        journal(Event(type="stop", step=2, data=data))
    events = read_journal(path)
    assert [{k: v for k, v in e.items() if k not in ("type", "step", "t")} for e in events] == [
        data,
        data,
    ]
    raw = path.read_bytes()
    last_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    tear_at = last_start + cut % (len(raw) - 1 - last_start)
    while _inside_a_character(raw, tear_at):
        tear_at -= 1
    path.write_bytes(raw[:tear_at])
    assert [e["type"] for e in read_journal(path)] == ["warning"]


CHILD = textwrap.dedent("""
    import sys
    from reactloop import Agent, Journal, Limits, ScriptedModel, tool

    @tool
    def block(text: str) -> str:
        '''Signal the parent, then wait for a kill.

        Args:
            text: anything
        '''
        print("ready", flush=True)
        sys.stdin.read()
        return text

    @tool(read_only=True)
    def echo(text: str) -> str:
        '''Echo.

        Args:
            text: anything
        '''
        return text

    turns = [
        {"content": "step one", "tool_calls": [{"name": "echo", "arguments": {"text": "x" * 5000}}],
         "usage": {"input_tokens": 100, "output_tokens": 10}},
        {"tool_calls": [{"name": "echo", "arguments": {"text": "second"}}]},
        {"tool_calls": [{"name": "block", "arguments": {"text": "never returns"}}]},
        {"content": "unreachable"},
    ]
    journal = Journal(sys.argv[1], fsync=sys.argv[2] == "1")
    Agent(ScriptedModel(turns), [block, echo], journal=journal, limits=Limits()).run("go")
""")


@pytest.mark.parametrize("fsync", [False, True])
def test_sigkill_mid_run_leaves_a_readable_journal(tmp_path: Path, fsync: bool) -> None:
    path = tmp_path / "killed.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), "1" if fsync else "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 120)
        assert ready, "the child never signalled"
        assert child.stdout.readline() == b"ready\n", child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every written line is complete: flushed line by line
    for line in lines[:-1]:
        json.loads(line)
    events = read_journal(path)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_start" and "stop" not in kinds
    assert kinds.count("tool_result") == 2 and kinds[-2:] == ["tool_call", "tool_start"]
    assert events[-2]["call"]["name"] == events[-1]["name"] == "block"  # written ahead


def test_missing_and_empty_journals_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="cannot read journal"):
        read_journal(tmp_path / "absent.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(JournalError, match="empty"):
        read_journal(empty)


class _Trickle:
    """A raw file that takes at most ``size`` bytes a call (as a signal or a full disk may)."""

    def __init__(self, real: Any, size: int) -> None:
        self.real, self.size = real, size

    def write(self, data: bytes) -> int:
        return int(self.real.write(data[: self.size]))

    def close(self) -> None:
        self.real.close()


def test_partial_writes_are_completed_and_a_stuck_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    journal = Journal(path)
    journal._file = _Trickle(journal._file, 7)  # type: ignore[assignment]
    journal(Event(type="stop", step=1, data=SAMPLES["stop"]))
    assert read_journal(path)[0]["answer"] == HOSTILE
    journal._file = _Trickle(journal._file.real, 0)  # type: ignore[union-attr]
    with pytest.raises(OSError, match="took 0 of"):
        journal(Event(type="stop", step=2, data=SAMPLES["stop"]))
    journal.close()
