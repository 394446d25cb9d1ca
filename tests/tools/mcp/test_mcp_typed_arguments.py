"""A Qwen3-Coder XML call reaches a real MCP server with the types its schema says: the XML
carries every value as text, and the tool's schema says which are numbers, integers, booleans
and nulls (``tools/schema_coerce.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reactloop import Agent, ModelTurn, ScriptedModel
from reactloop.models.openai.reply import finish_turn
from reactloop.tools.mcp import MCPServers, ServerConfig

HERE = Path(__file__).resolve().parent
SCHEMAS = {
    "box": {
        "type": "object",
        "properties": {
            "height": {"type": "number"},
            "count": {"type": "integer"},
            "open": {"type": "boolean"},
            "label": {"type": "string"},
            "limit": {"type": "integer", "default": None},
        },
        "required": ["height", "count"],
    }
}
XML = (
    "<tool_call>\n<function=box>\n<parameter=height>\n5.5\n</parameter>\n"
    "<parameter=count>\n3\n</parameter>\n<parameter=open>\ntrue\n</parameter>\n"
    "<parameter=label>\n42\n</parameter>\n<parameter=limit>\nnull\n</parameter>\n"
    "</function>\n</tool_call>"
)


def test_an_xml_call_reaches_the_server_with_its_schema_s_types(tmp_path: Path) -> None:
    schemas = tmp_path / "tools.json"
    schemas.write_text(json.dumps(SCHEMAS))
    server = ServerConfig(
        name="schemas", command=sys.executable, args=(str(HERE / "schema_server.py"), str(schemas))
    )
    turn = finish_turn(ModelTurn(text=XML, finish_reason="stop"))
    assert [call.name for call in turn.tool_calls] == ["box"]
    with MCPServers([server]) as servers:
        result = Agent(ScriptedModel([turn, "done"]), servers.tools).run("a box")
    observation = json.loads(next(m for m in result.history if m.role == "tool").content)
    assert observation["ok"], observation
    got = json.loads(observation["output"])["arguments"]
    assert got == {"height": 5.5, "count": 3, "open": True, "label": "42"}
