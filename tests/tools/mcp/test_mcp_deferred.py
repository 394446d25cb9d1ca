"""An MCP server marked ``"defer": true`` in the config: its tools wait for ``search_tools``,
then run on the real server through ``call_tool``, validated by the server's schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reactloop.errors import UsageError
from reactloop.messages import ToolCall
from reactloop.tools.mcp import open_mcp_tools
from reactloop.tools.mcp.config import parse_config
from reactloop.tools.search import CALL_TOOL, SEARCH_TOOLS
from reactloop.tools.toolbox import Toolbox

HERE = Path(__file__).parent
OBJECT = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}


def test_defer_must_be_a_boolean() -> None:
    entry = {"command": "x", "defer": True}
    assert parse_config({"mcpServers": {"s": entry}})[0].defer is True
    assert parse_config({"mcpServers": {"s": {"command": "x"}}})[0].defer is None
    with pytest.raises(UsageError, match="defer must be true or false"):
        parse_config({"mcpServers": {"s": {"command": "x", "defer": "yes"}}})


def test_a_deferred_servers_tools_are_found_then_called(tmp_path: Path) -> None:
    schemas = tmp_path / "tools.json"
    schemas.write_text(json.dumps({"kv_store_put": OBJECT, "kv_store_delete": OBJECT}))
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(HERE / "schema_server.py"), str(schemas)]}
    config.write_text(json.dumps({"mcpServers": {"kv": {**server, "defer": True}}}))
    with open_mcp_tools((), (), config, reserved=[]) as tools:
        box = Toolbox(tools).for_run()
        assert [s.name for s in box.specs] == [SEARCH_TOOLS, CALL_TOOL]
        found = box.execute(
            ToolCall(id="1", name=SEARCH_TOOLS, arguments='{"queries": ["delete from kv store"]}')
        )
        assert found.output["tools"][0]["name"] == "kv_store_delete"
        bad = box.execute(ToolCall(id="2", name=CALL_TOOL, arguments='{"name": "kv_store_delete"}'))
        assert not bad.ok and "key" in str(bad.error) and not bad.executed
        ran = box.execute(
            ToolCall(
                id="3",
                name=CALL_TOOL,
                arguments='{"name": "kv_store_delete", "arguments": {"key": "a"}}',
            )
        )
        assert ran.ok and json.loads(str(ran.output)) == {
            "tool": "kv_store_delete",
            "arguments": {"key": "a"},
        }
