"""A server's tool listing is bounded (``tools/mcp/listing.py``): a schema too big or too deep
is refused with the tool's name and the bound, never "did not list its tools", and checking
the schemas counts against the listing's time limit."""

from __future__ import annotations

import json
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import HERE

from reactloop.tools.mcp import MCPServers, MCPStartError, ServerConfig, listing
from reactloop.tools.mcp.listing import (
    MAX_SCHEMA_CHARS,
    MAX_SCHEMA_DEPTH,
    ListingRefused,
    deep_listing,
    prepared,
)

RAW = HERE / "raw_schema_server.py"


def raw_server(*args: str) -> ServerConfig:
    return ServerConfig(
        name="raw", command=sys.executable, args=[str(RAW), *args], list_tools_timeout=10
    )


def start_error(*args: str) -> str:
    with pytest.raises(MCPStartError) as caught, MCPServers([raw_server(*args)]):
        pass
    return str(caught.value)


@pytest.mark.parametrize("levels", [20_000, 150])  # past the SDK's decoder, and within it
def test_a_schema_too_deep_is_refused_naming_the_tool_not_blaming_the_listing(
    levels: int,
) -> None:
    error = start_error("--deep", str(levels))
    assert error == (
        "MCP server 'raw' lists the tool 't0' with an input schema nested deeper than "
        f"{MAX_SCHEMA_DEPTH} levels (the limit of a tool's schema)"
    )


def test_a_schema_within_the_depth_limit_makes_a_tool() -> None:
    with MCPServers([raw_server("--deep", "90")]) as servers:
        assert [tool.name for tool in servers.tools] == ["t0"]


def test_a_schema_too_big_is_refused_naming_the_tool_and_the_limit() -> None:
    error = start_error("--megabytes", "2")
    assert error.startswith("MCP server 'raw' lists the tool 't0' with an input schema of ")
    assert error.endswith(f"characters of JSON, more than the limit of {MAX_SCHEMA_CHARS:,}")


def test_a_listing_too_big_is_refused_naming_where_it_passed_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(listing, "MAX_LISTING_CHARS", 50_000)
    error = start_error("--megabytes", "0.003", "--tools", "30")  # 2,9xx characters a tool
    assert error == (
        "MCP server 'raw' lists tools whose names, descriptions and input schemas come to "
        "more than 50,000 characters (the limit of a listing; passed at the tool 't16')"
    )


def test_a_description_of_megabytes_counts_against_the_listing() -> None:
    error = start_error("--deep", "3", "--description-megabytes", "5")
    assert error == (
        "MCP server 'raw' lists tools whose names, descriptions and input schemas come to "
        "more than 4,194,304 characters (the limit of a listing; passed at the tool 't0')"
    )


def test_checking_the_schemas_counts_against_the_listing_limit() -> None:
    items = [SimpleNamespace(name=f"t{n}", input_schema={"type": "object"}) for n in range(3)]
    assert len(prepared(items, "openai", time.monotonic() + 60, "60 s")) == 3
    with pytest.raises(ListingRefused) as caught:
        prepared(items, "openai", time.monotonic() - 1, "5 s")
    assert str(caught.value) == (
        "listed 3 tools, but checking their schemas took longer than the listing limit "
        "of 5 s (at the tool 't0')"
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\{}[]:, \n\u00e9'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


def nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = {"items": value}
    return value


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@settings(max_examples=60, deadline=None)
@given(
    schemas=st.lists(
        st.tuples(JSON, st.integers(0, 130), st.text(max_size=4)), min_size=1, max_size=3
    ),
    ident=st.integers(-5, 10**6) | st.text(max_size=4),
    name_first=st.booleans(),
)
def test_deep_listing_names_the_first_tool_past_the_depth_limit(
    schemas: list[tuple[Any, int, str]], ident: Any, name_first: bool
) -> None:
    tools = []
    for schema, levels, name in schemas:
        body = nested(schema, levels)
        tools.append(
            {"name": name, "inputSchema": body}
            if name_first
            else {"inputSchema": body, "name": name}
        )
    line = json.dumps({"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
    too_deep = [t["name"] for t in tools if depth(t["inputSchema"]) > MAX_SCHEMA_DEPTH]
    assert deep_listing(line) == ((ident, too_deep[0]) if too_deep else None)


@given(st.text(alphabet='{}[]":,\\ab1 ', max_size=300) | JSON.map(json.dumps))
def test_deep_listing_never_raises_on_any_text(text: str) -> None:
    deep_listing(text)
