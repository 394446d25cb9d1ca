"""A server of our own that crashes, hangs, writes garbage, starts slowly or dies mid-session:
each ends that call with an error naming the server and what happened; the next call restarts
it once; no process is left behind."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_helpers import alive, journaled, pids, tool_results, wait_gone

from reactloop import ScriptedModel, Toolbox, ToolCall, ToolResult
from reactloop.tools.mcp import MCPServers, MCPStartError, ServerConfig, open_mcp_tools

Make = Callable[..., ServerConfig]


def run(box: Toolbox, name: str, arguments: str = "{}") -> ToolResult:
    return box.execute(ToolCall(id=name, name=name, arguments=arguments))


def test_a_crash_names_the_server_and_its_last_words_then_it_restarts_once(
    bad_server: Make, starts: Path
) -> None:
    with open_mcp_tools(servers=[bad_server()]) as tools:
        box = Toolbox(tools)
        crashed = run(box, "crash", '{"message": "out of cheese"}')
        again = run(box, "echo", '{"text": "back"}')
        first, second = pids(starts)
        assert not alive(first) and alive(second)
    assert crashed.error == (
        "MCP server 'bad' closed the connection during 'crash' "
        "(its stderr: RuntimeError: out of cheese); it will be restarted on the next call"
    )
    assert again.ok and again.output == "back"
    assert not alive(second)


def test_a_hang_ends_at_the_call_limit_and_the_next_call_restarts_it(
    bad_server: Make, starts: Path
) -> None:
    with open_mcp_tools(servers=[bad_server(call_timeout=0.5)]) as tools:
        box = Toolbox(tools)
        started = time.monotonic()
        hung = run(box, "hang")
        took = time.monotonic() - started
        after = run(box, "echo", '{"text": "fresh"}')
        assert len(pids(starts)) == 2
    assert 0.5 <= took < 2.0
    assert hung.error == (
        "MCP server 'bad' did not answer 'hang' within 0.5 s; it will be restarted on the next call"
    )
    assert after.ok and after.output == "fresh"
    assert not any(alive(pid) for pid in pids(starts))


def test_garbage_on_stdout_is_named_in_the_error(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server(call_timeout=0.5)]) as tools:
        result = run(Toolbox(tools), "garbage")
    assert result.error is not None
    assert result.error.startswith(
        "MCP server 'bad' wrote output that is not JSON-RPC ('this is not JSON-RPC {{{')"
    )
    assert "did not answer 'garbage' within 0.5 s" in result.error


def test_a_banner_on_stdout_at_start_does_not_stop_the_server(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server("--garbage-at-start")]) as tools:
        assert run(Toolbox(tools), "echo", '{"text": "ok"}').output == "ok"


def test_a_second_failure_leaves_the_server_gone_for_the_run(
    tmp_path: Path, bad_server: Make, starts: Path
) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "crash", "arguments": {}}]},
            {"tool_calls": [{"name": "crash", "arguments": {"message": "twice"}}]},
            {"tool_calls": [{"name": "echo", "arguments": {"text": "anyone?"}}]},
            {"content": "the server is gone"},
        ]
    )
    with open_mcp_tools(servers=[bad_server()]) as tools:
        result, events = journaled(tmp_path, model, tools)
    first, second, third = (r["error"] for r in tool_results(events))
    assert first.endswith("it will be restarted on the next call")
    assert "(its stderr: RuntimeError: twice)" in second
    assert second.endswith("it has been restarted once already and is gone for this run")
    assert third == ("MCP server 'bad' is gone for this run (closed the connection during 'crash')")
    assert result.answer == "the server is gone"
    assert len(pids(starts)) == 2 and not any(alive(pid) for pid in pids(starts))


def test_a_server_that_dies_between_calls_is_noticed_and_restarted(
    bad_server: Make, starts: Path
) -> None:
    with open_mcp_tools(servers=[bad_server()]) as tools:
        box = Toolbox(tools)
        assert run(box, "exit_soon").output == "exiting"
        (first,) = pids(starts)
        assert wait_gone(first)  # the server exits 50 ms after it answered
        noticed = run(box, "echo", '{"text": "hello?"}')
        restarted = run(box, "echo", '{"text": "hello"}')
    assert noticed.error is not None
    assert noticed.error.startswith("MCP server 'bad' closed the connection during 'echo'")
    assert restarted.output == "hello"


def test_a_slow_start_fails_at_the_start_up_limit_and_leaves_no_process(
    bad_server: Make, starts: Path
) -> None:
    started = time.monotonic()
    with (
        pytest.raises(MCPStartError, match=r"^MCP server 'bad' did not start within 2 s$"),
        open_mcp_tools(servers=[bad_server("--slow-start", "30", startup_timeout=2.0)]),
    ):
        pass
    assert time.monotonic() - started < 15  # the limit, not the server's 30 s
    assert pids(starts) and not any(alive(pid) for pid in pids(starts))


def test_a_server_that_exits_at_start_says_why(bad_server: Make) -> None:
    with pytest.raises(MCPStartError) as raised:
        MCPServers([bad_server("--exit-at-start")]).start()
    message = str(raised.value)
    assert message.startswith("MCP server 'bad' could not start: ")
    assert message.endswith("(its stderr: misbehaving: refusing to start)")


def test_a_tool_listing_that_never_returns_fails_at_its_limit(
    bad_server: Make, starts: Path
) -> None:
    config = bad_server("--hang-listing", list_tools_timeout=0.5)
    with pytest.raises(
        MCPStartError, match=r"^MCP server 'bad' did not list its tools within 0.5 s$"
    ):
        MCPServers([config]).start()
    assert not any(alive(pid) for pid in pids(starts))


@pytest.mark.parametrize("sse", [False, True], ids=["http", "sse"])
def test_an_http_server_that_is_not_there_is_a_start_error_on_both_transports(sse: bool) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = "/sse" if sse else "/mcp"
    config = ServerConfig(name="web", url=f"http://127.0.0.1:{port}{path}", sse=sse)
    started = time.monotonic()
    with pytest.raises(MCPStartError, match=r"^MCP server 'web' could not start: ConnectError"):
        MCPServers([config]).start()
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("sse", [False, True], ids=["http", "sse"])
def test_a_url_that_accepts_and_never_answers_fails_at_the_start_up_limit(sse: bool) -> None:
    with socket.socket() as listener:  # accepts connections (the kernel's backlog), never reads
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        path = "/sse" if sse else "/mcp"
        config = ServerConfig(
            name="mute", url=f"http://127.0.0.1:{port}{path}", sse=sse, startup_timeout=0.5
        )
        started = time.monotonic()
        with pytest.raises(MCPStartError) as raised:
            MCPServers([config]).start()
        assert time.monotonic() - started < 3
    assert str(raised.value) == "MCP server 'mute' did not start within 0.5 s"


def test_a_command_that_does_not_exist_is_a_start_error() -> None:
    config = ServerConfig(name="nope", command="/nonexistent/mcp-server")
    with pytest.raises(MCPStartError, match=r"^MCP server 'nope' could not start: .*No such file"):
        MCPServers([config]).start()


def test_the_run_deadline_cuts_the_call_limit(bad_server: Make) -> None:
    ends: list[float] = []  # no deadline while the server starts
    with MCPServers(
        [bad_server(call_timeout=30)], deadline=lambda: min(ends, default=None)
    ) as servers:
        ends.append(time.monotonic() + 0.5)
        result = run(Toolbox(servers.tools), "hang")
        took = time.monotonic() - ends[0] + 0.5
        late = run(Toolbox(servers.tools), "echo", '{"text": "late"}')
    assert took < 1.5
    assert re.match(
        r"MCP server 'bad' did not answer 'hang' within 0\.\d+ s \(the run's time left\)",
        result.error or "",
    )
    assert late.error == "the run's time limit was reached before the MCP restart"


def test_an_exception_in_the_tool_is_an_error_observation(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server()]) as tools:
        box = Toolbox(tools)
        failed = run(box, "fail", '{"reason": "no"}')
        fine = run(box, "echo", '{"text": "still here"}')
    assert not failed.ok and failed.executed and "fail" in (failed.error or "")
    assert fine.output == "still here"


def test_read_only_hints_decide_what_may_run_in_parallel(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server()]) as tools:
        flags = {tool.name: tool.read_only for tool in tools}
        idempotent = {tool.name for tool in tools if tool.idempotent}
    assert flags["echo"] and flags["pid"]
    assert not flags["crash"] and not flags["exit_soon"] and not flags["remember"]
    # idempotentHint: a call that may have run is run again on resume, not refused
    assert idempotent == {"remember"}


def test_a_hung_call_does_not_outlive_the_runs_time_limit(
    tmp_path: Path, bad_server: Make, starts: Path
) -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "hang", "arguments": {}}]}, "gave up"])
    with open_mcp_tools(servers=[bad_server(call_timeout=30)]) as tools:
        started = time.monotonic()
        result, events = journaled(tmp_path, model, tools, max_seconds=1.0)
        took = time.monotonic() - started
    assert took < 2.5
    (hung,) = tool_results(events)
    assert hung["ok"] is False
    assert str(result.stop_reason) == "timeout"
    assert not any(alive(pid) for pid in pids(starts))
