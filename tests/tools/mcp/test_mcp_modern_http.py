"""A stateless server over streamable HTTP on the 2026-07-28 protocol era that answers with
what is not MCP (an HTML error page, a body that is not JSON, bytes): the error says in one
line what came back (status, content type, first bytes), not a generic "did not answer"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_helpers import HERE, PORT, served

from reactloop import Tool, Toolbox, ToolCall
from reactloop.tools.mcp import MCPServers, MCPStartError, ServerConfig

SERVER = HERE / "modern_http_server.py"


def serve(*options: str) -> Iterator[str]:
    return served(SERVER, PORT, *options)


@pytest.fixture(scope="module")
def modern() -> Iterator[list[Tool]]:
    url = next(urls := serve())
    with MCPServers([ServerConfig(name="modern", url=url, call_timeout=20)]) as servers:
        client = servers.connections[0]._client
        assert client.protocol_version == "2026-07-28"  # the stateless era, not the handshake
        yield servers.tools
    urls.close()


def error_of(tools: list[Tool], name: str) -> str:
    result = Toolbox(tools).execute(ToolCall(id="1", name=name, arguments="{}"))
    assert not result.ok and result.error is not None
    return result.error


@pytest.mark.parametrize(
    ("tool", "received"),
    [
        (
            "html",
            "HTTP 200, text/html; charset=utf-8, 49 bytes: "
            "b'<html><head><title>502 Bad Gateway</title></head>'",
        ),
        (
            "not_json",
            "HTTP 200, application/json, 42 bytes: b'upstream connect error or disconnect/reset'",
        ),
        ("empty", "HTTP 200, application/json, an empty body"),
        ("binary", "HTTP 200, application/octet-stream, 11 bytes: b'\\xff\\xfe\\x00garbage\\x80'"),
        (
            "bad_gateway",
            "HTTP 502, text/html, 43 bytes: b'<html><title>502 Bad Gateway</title></html>'",
        ),
    ],
)
def test_an_answer_that_is_not_mcp_is_described_in_one_line(
    modern: list[Tool], tool: str, received: str
) -> None:
    assert error_of(modern, tool) == (
        f"MCP server 'modern' answered {tool!r} with what is not an MCP answer: {received}"
    )


def test_an_event_stream_that_is_not_json_rpc_is_one_line_that_shows_it(
    modern: list[Tool],
) -> None:
    error = error_of(modern, "sse_garbage")
    assert "\n" not in error and len(error) < 400
    assert "input_value='<html>oops</html>'" in error


def test_the_server_still_answers_after_those(modern: list[Tool]) -> None:
    result = Toolbox(modern).execute(ToolCall(id="1", name="echo", arguments='{"text": "hi"}'))
    assert (result.ok, result.output) == (True, "hi")


def start_error(option: str) -> str:
    urls = serve(option)
    url = next(urls)
    try:
        with pytest.raises(MCPStartError) as raised, MCPServers([ServerConfig(name="m", url=url)]):
            pass
    finally:
        urls.close()
    return str(raised.value)


def test_a_listing_answered_with_html_says_what_came_back() -> None:
    assert start_error("--broken-listing") == (
        "MCP server 'm' answered the tool listing with what is not an MCP answer: HTTP 200, "
        "text/html; charset=utf-8, 49 bytes: b'<html><head><title>502 Bad Gateway</title></head>'"
    )


def test_a_listing_too_deep_to_decode_names_its_tool_over_http_too() -> None:
    assert start_error("--deep-listing") == (
        "MCP server 'm' lists the tool 'deep' with an input schema nested deeper than 100 "
        "levels (the limit of a tool's schema)"
    )


def test_the_hook_never_breaks_a_request_and_notes_only_calls_and_listings() -> None:
    import anyio
    import httpx2

    from reactloop.tools.mcp.received import Received

    def answer(body: bytes | None, content_type: str, payload: bytes) -> httpx2.Response:
        request = httpx2.Request("POST", "http://127.0.0.1:1/mcp", content=body)
        headers = {"content-type": content_type}
        return httpx2.Response(200, headers=headers, content=payload, request=request)

    call = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}'
    received = Received()
    for body in (b"not json", b"[]", b'{"method": "ping"}', b'{"method": "tools/call"}', None):
        anyio.run(received.hook, answer(body, "text/html", b"<html>"))
    anyio.run(received.hook, answer(call, "application/json", b'{"jsonrpc": "2.0"}'))
    assert received.take("t") is None  # JSON: the SDK's to read
    anyio.run(received.hook, answer(call, "text/plain", b"x" * 100_000))
    shown = "HTTP 200, text/plain, more than 65,536 bytes: b'" + "x" * 80 + "'..."
    assert received.take("t") == shown
    assert received.take("t") is None  # once
