"""The reference server ``@modelcontextprotocol/server-everything`` (npm), over stdio and over
streamable HTTP and over the older HTTP+SSE transport on 127.0.0.1: echo, get-sum, a
long-running operation, structured content."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from mcp_helpers import EVERYTHING_JS, free_port, journaled, serving, tool_results

from reactloop import ScriptedModel, Tool, Toolbox, ToolCall, ToolResult
from reactloop.tools.mcp import MCPServers, ServerConfig, url_server

pytestmark = pytest.mark.skipif(
    not EVERYTHING_JS.exists(),
    reason="server-everything is not installed: npm ci --prefix tests/tools/mcp/node",
)


def serve(transport: str, says: str, path: str) -> Iterator[str]:
    """server-everything with one of its HTTP transports on a free port; its URL (it logs
    every message on stderr, which ``serving`` reads on)."""
    port = free_port()
    return serving(
        ["node", str(EVERYTHING_JS), transport],
        says,
        f"http://127.0.0.1:{port}{path}",
        f"server-everything's {transport} transport",
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """server-everything's streamable HTTP transport, started once for the module."""
    yield from serve("streamableHttp", "listening on port", "/mcp")


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    """server-everything's older HTTP+SSE transport (its ``sse`` argument)."""
    yield from serve("sse", "Server is running on port", "/sse")


@pytest.fixture(scope="module", params=["stdio", "http", "sse"])
def everything(request: pytest.FixtureRequest) -> Iterator[list[Tool]]:
    if request.param == "stdio":
        config = ServerConfig(
            name="everything", command="node", args=(str(EVERYTHING_JS), "stdio"), call_timeout=2
        )
    elif request.param == "http":
        url = request.getfixturevalue("http_url")
        config = ServerConfig(name="everything", url=url, call_timeout=2)
    else:  # found to be SSE by its /sse path, as --mcp-url finds it
        config = replace(url_server(request.getfixturevalue("sse_url")), name="everything")
        assert config.transport == "sse"
        config = replace(config, call_timeout=2)
    with MCPServers([config]) as servers:
        yield servers.tools


def run(tools: list[Tool], name: str, **arguments: object) -> ToolResult:
    return Toolbox(tools).execute(ToolCall(id="1", name=name, arguments=json.dumps(arguments)))


def test_echo(everything: list[Tool]) -> None:
    assert run(everything, "echo", message="hello, MCP").output == "Echo: hello, MCP"


def test_get_sum_checks_its_schema_first(everything: list[Tool]) -> None:
    assert run(everything, "get-sum", a=2, b=40).output == "The sum of 2 and 40 is 42."
    refused = run(everything, "get-sum", a=2)
    assert refused.error == "invalid arguments: arguments: 'b' is a required property"
    assert not refused.executed


def test_structured_content_reaches_the_model(everything: list[Tool]) -> None:
    result = run(everything, "get-structured-content", location="Chicago")
    assert result.output == {
        "temperature": 36,
        "conditions": "Light rain / drizzle",
        "humidity": 82,
    }


def test_a_long_running_operation_within_the_limit(everything: list[Tool]) -> None:
    result = run(everything, "trigger-long-running-operation", duration=0.2, steps=2)
    assert result.output == "Long running operation completed. Duration: 0.2 seconds, Steps: 2."


def test_images_and_resources_are_described(everything: list[Tool]) -> None:
    image = run(everything, "get-tiny-image").output
    assert "[image content: image/png, about" in image and "not shown]" in image
    reference = run(everything, "get-resource-reference", resourceType="Text", resourceId=1)
    assert "[resource demo://resource/dynamic/text/1, text/plain]\nResource 1:" in reference.output


def test_a_full_run_over_the_server(tmp_path: Path, everything: list[Tool]) -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "get-sum", "arguments": {"a": 35, "b": 12}}]},
            {"content": "47"},
        ]
    )
    result, events = journaled(tmp_path, model, everything)
    assert result.answer == "47"
    assert tool_results(events)[0]["output"] == "The sum of 35 and 12 is 47."


def test_a_long_running_operation_past_the_limit_then_a_restart(everything: list[Tool]) -> None:
    # last in the file: the module's server has used its one restart after this
    started = time.monotonic()
    late = run(everything, "trigger-long-running-operation", duration=30, steps=2)
    assert time.monotonic() - started < 4
    assert late.error == (
        "MCP server 'everything' did not answer 'trigger-long-running-operation' within 2 s; "
        "it will be restarted on the next call"
    )
    assert run(everything, "echo", message="after").output == "Echo: after"


def test_the_cli_takes_an_sse_url(sse_url: str) -> None:
    from click.testing import CliRunner

    from reactloop.cli import main

    result = CliRunner().invoke(main, ["tools", "--mcp-url", sse_url])
    assert result.exit_code == 0, result.stderr
    listed = {spec["name"]: spec for spec in json.loads(result.stdout)}
    assert listed["get-sum"]["parameters"]["required"] == ["a", "b"]
