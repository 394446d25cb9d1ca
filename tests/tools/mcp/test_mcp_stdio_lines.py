"""The stdio transport's reader: a 30 MB answer arrives whole, each line is taken in linear
time (every byte scanned once, not once per chunk as the SDK's ``buffer + chunk`` did), and a
line that is not UTF-8 is quoted in the error, as garbage is."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, cast

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop import Toolbox, ToolCall
from reactloop.tools.mcp import ServerConfig, open_mcp_tools
from reactloop.tools.mcp.stdio import NotUTF8, lines_of, stdio_client

Make = Callable[..., ServerConfig]


class Chunk(bytes):
    """A chunk that counts the bytes ``find`` scans in it."""

    scanned = 0

    def find(self, sub: bytes, start: int = 0, *args: int) -> int:  # type: ignore[override]
        found = super().find(sub, start, *args)
        Chunk.scanned += (found + 1 if found != -1 else len(self)) - start
        return found


class Stream:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def receive(self) -> bytes:
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)


def read_all(chunks: list[bytes]) -> list[str | NotUTF8]:
    async def collect() -> list[str | NotUTF8]:
        return [line async for line in lines_of(Stream(chunks))]

    return asyncio.run(collect())


def test_a_30_mb_line_in_64_kib_chunks_is_scanned_once() -> None:
    size, chunk = 30 * 1024 * 1024, 64 * 1024
    data = b"x" * size + b"\n"
    chunks = [Chunk(data[i : i + chunk]) for i in range(0, len(data), chunk)]
    Chunk.scanned = 0
    (line,) = read_all(list(chunks))
    assert isinstance(line, str) and len(line) == size
    assert Chunk.scanned == len(data)  # each byte once: ~460 chunks, not ~460 copies of the line


@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",))),
        max_size=8,
    ),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=20),
)
def test_lines_come_out_whole_however_the_bytes_are_cut(lines: list[str], cuts: list[int]) -> None:
    data = b"".join(line.encode() + b"\n" for line in lines) + b"an unfinished line"
    chunks, start, index = [], 0, 0
    while start < len(data):
        step = cuts[index % len(cuts)]
        chunks.append(data[start : start + step])
        start, index = start + step, index + 1
    assert read_all(chunks) == lines


def test_a_line_that_is_not_utf8_comes_as_not_utf8_with_its_bytes() -> None:
    first, bad, last = read_all([b'{"a": 1}\n\xff\xfe x \x80', b"\nok\n"])
    assert (first, last) == ('{"a": 1}', "ok")
    assert isinstance(bad, NotUTF8) and bad.line == b"\xff\xfe x \x80"


def test_a_30_mb_answer_arrives_whole(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server()]) as tools:
        (big,) = [t for t in tools if t.name == "big"]
        output = big.function(megabytes=30)
    assert isinstance(output, str) and len(output) == 30 * 1024 * 1024
    assert output.startswith("0123456789abcdef") and output.endswith("0123456789abcdef")


def test_not_utf8_on_stdout_is_quoted_in_the_error(bad_server: Make) -> None:
    with open_mcp_tools(servers=[bad_server(call_timeout=0.5)]) as tools:
        result = Toolbox(tools).execute(ToolCall(id="n", name="not_utf8", arguments="{}"))
    assert result.error is not None
    assert result.error.startswith(
        "MCP server 'bad' wrote output that is not JSON-RPC (b'\\xff\\xfe not UTF-8 \\x80\\x81')"
    ), result.error


def test_an_sdk_without_the_pieces_it_reuses_gets_its_own_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp.client import stdio as sdk

    parameters = sdk.StdioServerParameters(command="unused")
    ours = stdio_client(parameters, errlog=sys.stderr)
    monkeypatch.delattr(sdk, "_drain_stdout")
    theirs = stdio_client(parameters, errlog=sys.stderr)
    assert cast(Any, ours).gen.__qualname__ == "_linear_stdio"
    assert cast(Any, theirs).gen.__qualname__ == "stdio_client"
