"""The real ``mcp-server-time`` (PyPI, stdio) in full agent runs with a scripted model."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from zoneinfo import ZoneInfo

from mcp_helpers import child_pids, journaled, tool_results

from helpers import scripted_call
from reactloop import ScriptedModel, Toolbox, ToolCall
from reactloop.tools.mcp import MCPServers, ServerConfig, open_mcp_tools


def test_the_journal_shows_the_real_servers_answer(
    tmp_path: Path, time_server: ServerConfig
) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [scripted_call("get_current_time", timezone="Europe/Athens")]},
            {"content": "It is Tuesday in Athens."},
        ]
    )
    with open_mcp_tools(servers=[time_server]) as tools:
        result, events = journaled(tmp_path, model, tools)
    assert result.answer == "It is Tuesday in Athens." and result.tool_calls == 1
    (observed,) = tool_results(events)
    assert observed["ok"] is True
    output = observed["output"]
    assert output["timezone"] == "Europe/Athens"
    stamp = datetime.datetime.fromisoformat(output["datetime"])
    now = datetime.datetime.now(ZoneInfo("Europe/Athens"))
    assert abs((now - stamp).total_seconds()) < 120
    assert stamp.utcoffset() == now.utcoffset()
    assert output["day_of_week"] == stamp.strftime("%A")


def test_an_is_error_result_is_an_error_observation_and_the_run_goes_on(
    tmp_path: Path, time_server: ServerConfig
) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [scripted_call("get_current_time", timezone="Nowhere/Atlantis")]},
            {"tool_calls": [scripted_call("get_current_time", timezone="Etc/UTC")]},
            {"content": "done"},
        ]
    )
    with open_mcp_tools(servers=[time_server]) as tools:
        result, events = journaled(tmp_path, model, tools)
    failed, worked = tool_results(events)
    assert failed["ok"] is False and "Nowhere/Atlantis" in failed["error"]
    assert worked["ok"] is True and worked["output"]["timezone"] == "Etc/UTC"
    assert result.answer == "done"


def test_tools_come_with_the_servers_schema_and_read_only_hint(time_server: ServerConfig) -> None:
    with open_mcp_tools(servers=[time_server]) as tools:
        by_name = {tool.name: tool for tool in tools}
        assert set(by_name) == {"get_current_time", "convert_time"}
        spec = by_name["convert_time"].spec
        assert spec.parameters["required"] == ["source_timezone", "time", "target_timezone"]
        assert "title" not in json.dumps(spec.parameters)
        assert all(tool.read_only for tool in tools)  # readOnlyHint: true


def test_invalid_arguments_are_refused_before_the_server_sees_them(
    time_server: ServerConfig,
) -> None:
    with open_mcp_tools(servers=[time_server]) as tools:
        box = Toolbox(tools)
        missing = box.execute(ToolCall(id="1", name="convert_time", arguments='{"time": "10:00"}'))
        wrong = box.execute(ToolCall(id="2", name="get_current_time", arguments='{"timezone": 3}'))
    assert not missing.ok and not missing.executed
    assert "source_timezone" in (missing.error or "")
    assert wrong.error == "invalid arguments: timezone: 3 is not of type 'string'"


def test_read_only_calls_of_one_turn_run_together(
    tmp_path: Path, time_server: ServerConfig
) -> None:
    zones = ["Europe/Athens", "Asia/Tokyo", "America/New_York", "Europe/Paris"]
    model = ScriptedModel(
        [
            {"tool_calls": [scripted_call("get_current_time", timezone=zone) for zone in zones]},
            {"content": "done"},
        ]
    )
    with open_mcp_tools(servers=[time_server]) as tools:
        _, events = journaled(tmp_path, model, tools)
    assert [r["output"]["timezone"] for r in tool_results(events)] == zones


def test_clashing_names_are_prefixed_with_the_server_name(time_server: ServerConfig) -> None:
    other = ServerConfig(name="clock", command=time_server.command, env=time_server.env)
    with MCPServers([time_server, other], reserved=["convert_time"]) as servers:
        names = sorted(tool.name for tool in servers.tools)
        box = Toolbox(servers.tools)
        answer = box.execute(
            ToolCall(id="1", name="clock_get_current_time", arguments='{"timezone": "Etc/UTC"}')
        )
    assert names == [
        "clock_convert_time",
        "clock_get_current_time",
        "time_convert_time",
        "time_get_current_time",
    ]
    assert answer.ok and answer.output["timezone"] == "Etc/UTC"


def test_the_server_process_is_gone_after_the_with_block(time_server: ServerConfig) -> None:
    before = child_pids()
    with open_mcp_tools(servers=[time_server]):
        started = child_pids() - before
        assert len(started) == 1
    assert not (child_pids() & started)
