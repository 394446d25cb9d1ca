"""``--defer-tools`` on ``reactloop run`` (text ReAct: the pair works without native tool
calling) and ``reactloop tools``: what the model is sent with tool search on."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import invoke
from reactloop import read_journal

SEARCH = 'Action: search_tools[{"queries": ["evaluate arithmetic expression"]}]'
CALL = 'Action: call_tool[{"name": "calculator", "arguments": {"expression": "6*7"}}]'


def _run(tmp_path: Path, steps: list[str]) -> tuple[int, dict, list[dict]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    trace = tmp_path / "t.jsonl"
    model = f"scripted:{script}"
    code, out, _ = invoke(
        "run", "q", "--model", model, "--defer-tools", "calc*", "--trace", str(trace), "--json"
    )
    return code, json.loads(out), read_journal(trace)


def test_a_deferred_tool_is_found_then_called_through_call_tool(tmp_path: Path) -> None:
    code, payload, events = _run(tmp_path, [SEARCH, CALL, "Finish[42]"])
    assert code == 0 and payload["answer"] == "42"
    start = next(e for e in events if e["type"] == "run_start")
    assert [t["name"] for t in start["tools"]] == ["search_tools", "call_tool"]
    assert [e["revealed"] for e in events if e["type"] == "tool_search"] == [["calculator"]]
    results = [e["result"] for e in events if e["type"] == "tool_result"]
    assert results[1]["name"] == "call_tool" and results[1]["output"] == "42"


def test_calling_before_searching_is_an_observation_not_a_run(tmp_path: Path) -> None:
    code, payload, events = _run(tmp_path, [CALL, "Finish[none]"])
    assert code == 0 and payload["answer"] == "none"
    result = next(e["result"] for e in events if e["type"] == "tool_result")
    assert not result["ok"] and not result["executed"]
    assert "not found by a search yet" in result["error"]


def test_tools_shows_what_the_model_is_sent() -> None:
    code, out, err = invoke("tools", "--tools", "calculator", "--defer-tools", "calculator")
    assert code == 0, err
    assert [t["name"] for t in json.loads(out)] == ["search_tools", "call_tool"]
    assert "1 deferred tools (calculator)" in err


def test_resume_defers_as_recorded_and_knows_what_was_found(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([SEARCH, CALL, "Finish[42]"]))
    trace = tmp_path / "t.jsonl"
    model = f"scripted:{script}"
    args = ("--defer-tools", "calc*", "--trace", str(trace), "--json", "--max-steps", "2")
    code, out, _ = invoke("run", "q", "--model", model, *args)
    assert json.loads(out)["stop_reason"] == "max_model_calls"
    start = next(e for e in read_journal(trace) if e["type"] == "run_start")
    assert start["config"]["defer_tools"] == ["calc*"]
    code, out, err = invoke("resume", str(trace), "--max-steps", "6", "--json")
    assert code == 0, err
    assert json.loads(out)["answer"] == "42"
    last = [e["result"] for e in read_journal(trace) if e["type"] == "tool_result"][-1]
    assert last["name"] == "call_tool" and last["ok"] and last["output"] == "42"


def test_replay_defers_as_recorded_and_finds_the_same_tools(tmp_path: Path) -> None:
    from reactloop.replay import replay

    code, _, _ = _run(tmp_path, [SEARCH, CALL, "Finish[42]"])
    assert code == 0
    replayed = tmp_path / "replayed.jsonl"
    report = replay(tmp_path / "t.jsonl", journal=replayed)
    assert report.identical and report.compared == 2, report.to_dict()
    searches = [e["revealed"] for e in read_journal(replayed) if e["type"] == "tool_search"]
    assert searches == [["calculator"]]
