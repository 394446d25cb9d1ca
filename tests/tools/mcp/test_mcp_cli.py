"""``reactloop run --mcp`` and ``reactloop tools --mcp`` against the real mcp-server-time."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import TIME_SERVER

from helpers import invoke, script
from reactloop import read_journal


def test_tools_lists_the_servers_tools_with_the_builtin_ones(time_server: object) -> None:
    code, out, err = invoke("tools", "--mcp", str(TIME_SERVER))
    assert code == 0, err
    names = [spec["name"] for spec in json.loads(out)]
    assert names[0] == "calculator" and "get_current_time" in names


def test_run_calls_the_servers_tool_and_journals_its_answer(
    time_server: object, tmp_path: Path
) -> None:
    call = {"name": "get_current_time", "arguments": {"timezone": "Europe/Athens"}}
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [call]}, "it is late"]))
    trace = tmp_path / "run.jsonl"
    code, out, err = invoke(
        "run", "q", "--model", f"scripted:{script}", "--mcp", str(TIME_SERVER),
        "--trace", str(trace),
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == "it is late"
    records = list(read_journal(trace))
    results = [r["result"] for r in records if r["type"] == "tool_result"]
    assert results[0]["ok"] is True and "Europe/Athens" in json.dumps(results[0])
    start = next(r for r in records if r["type"] == "run_start")
    assert start["config"]["mcp"]["stdio"] == [str(TIME_SERVER)]


def test_a_server_that_cannot_start_is_a_one_line_usage_error(tmp_path: Path) -> None:
    model = script(tmp_path, [{"text": "never asked"}])  # the model is built before servers start
    code, _, err = invoke("run", "q", "--model", model, "--mcp", "/no/such/server")
    assert code == 2
    assert err.startswith("reactloop: error: MCP server 'server' could not start")
    assert len(err.strip().splitlines()) == 1
