"""MCP tools with the schemas the providers refused, end to end: a real MCP server sends them
as they are (``schema_server.py``), the real adapters render them, and fake provider servers
refuse what the real ones refused, with the errors recorded in ``tests/wire_formats``.
Sent raw, each request is refused; sent by reactloop, each is accepted."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import HERE
from test_mcp_schema import (
    DRAFT_04,
    WIRE,
    anthropic_refusal,
    deepseek_refusal,
    openai_refusal,
    recorded,
)

from reactloop import Message, ModelRequest, ProviderError, Tool, ToolSpec
from reactloop.models.anthropic import AnthropicModel
from reactloop.models.openai import OpenAIChatModel
from reactloop.models.schemas.dialects import normalize_schema
from reactloop.testing import (
    FakeAnthropicServer,
    FakeOpenAIServer,
    anthropic_error,
    completion,
    error_reply,
    fixture_replies,
    json_reply,
    message,
)
from reactloop.testing.fake_openai import RecordedRequest
from reactloop.tools.mcp import MCPServers, ServerConfig
from reactloop.tools.mcp.schematool import schema_tool

# the tools, in this order: the index of each matters to Anthropic's error text
SCHEMAS: dict[str, Any] = {
    "ping": {"type": "object", "properties": {}},
    "list_databases": {"type": "object"},  # OpenAI: object schema missing properties
    "open_file": {  # both: combinators at the top level
        "type": "object",
        "properties": {"id": {"type": "string"}, "path": {"type": "string"}},
        "oneOf": [{"required": ["id"]}, {"required": ["path"]}],
    },
    "update_page": {  # OpenAI: 'allOf' is not permitted
        "type": "object",
        "properties": {"data": {"allOf": [{"type": "object"}, {"required": ["a"]}]}},
    },
    "locate": DRAFT_04,  # Anthropic, tools.4: not draft 2020-12
}
QUESTION = [Message(role="user", content="hi")]


@pytest.fixture(scope="module")
def mcp_specs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ToolSpec]]:
    schemas = tmp_path_factory.mktemp("schemas") / "tools.json"
    schemas.write_text(json.dumps(SCHEMAS))
    server = ServerConfig(
        name="schemas", command=sys.executable, args=(str(HERE / "schema_server.py"), str(schemas))
    )
    with MCPServers([server]) as servers:
        assert [t.name for t in servers.tools] == list(SCHEMAS)
        yield [tool.spec for tool in servers.tools]


def raw_specs() -> list[ToolSpec]:
    return [ToolSpec(name=n, description="d", parameters=s) for n, s in SCHEMAS.items()]


def openai_checker(recorded_file: str | None) -> Callable[[RecordedRequest], Any]:
    """A provider that refuses a tool list the way OpenAI does (the recorded reply for the
    recorded case, the same shape for the others)."""

    def respond(request: RecordedRequest) -> Any:
        for tool in request.json.get("tools", []):
            function = tool["function"]
            refusal = openai_refusal(function["name"], function["parameters"])
            if refusal is not None:
                if recorded_file and refusal == recorded(recorded_file):
                    return fixture_replies(WIRE / recorded_file)[0]
                error = {"message": refusal, "type": "invalid_request_error"}
                return error_reply(400, {"error": {**error, "code": "invalid_function_parameters"}})
        return json_reply(completion("accepted"))

    return respond


def anthropic_checker(request: RecordedRequest) -> Any:
    for index, tool in enumerate(request.json.get("tools", [])):
        refusal = anthropic_refusal(index, tool["input_schema"])
        if refusal is not None:
            return anthropic_error(400, "invalid_request_error", refusal)
    return message("accepted")


def openai_answer(specs: list[ToolSpec], respond: Callable[[RecordedRequest], Any]) -> str:
    with FakeOpenAIServer(responder=respond) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, max_retries=0)
        turn = model.complete(ModelRequest(messages=QUESTION, tools=specs))
    return turn.text


def anthropic_answer(specs: list[ToolSpec]) -> tuple[str, list[Any]]:
    with FakeAnthropicServer(responder=anthropic_checker) as server:
        model = AnthropicModel(model="claude-test", base_url=server.base_url, max_retries=0)
        turn = model.complete(ModelRequest(messages=QUESTION, tools=specs))
        return turn.text, server.requests[-1].json["tools"]


def test_openai_refuses_the_raw_schemas_and_accepts_reactloops(mcp_specs: list[ToolSpec]) -> None:
    respond = openai_checker("error_openai_400_tool_schema.json")
    with pytest.raises(ProviderError) as refused:
        openai_answer(raw_specs(), respond)
    assert refused.value.status == 400
    assert recorded("error_openai_400_tool_schema.json") in str(refused.value)
    for name in ("list_databases", "open_file", "update_page"):  # each one alone is refused
        alone = [s for s in raw_specs() if s.name == name]
        with pytest.raises(ProviderError, match=f"Invalid schema for function '{name}'"):
            openai_answer(alone, respond)
    assert openai_answer(mcp_specs, respond) == "accepted"


def test_anthropic_refuses_the_raw_schemas_and_accepts_reactloops(
    mcp_specs: list[ToolSpec],
) -> None:
    raw = raw_specs()
    with pytest.raises(
        ProviderError, match=r"tools\.2\.custom\.input_schema: input_schema does not"
    ):
        anthropic_answer(raw)
    with pytest.raises(ProviderError) as refused:
        anthropic_answer([s for s in raw if s.name != "open_file"][:3] + raw[4:])
    assert "tools.3.custom.input_schema: JSON schema is invalid" in str(refused.value)
    with_draft_04 = [*raw[:2], raw[0], raw[1], raw[4]]  # locate at index 4, as recorded
    with pytest.raises(ProviderError) as recorded_case:
        anthropic_answer(with_draft_04)
    assert recorded("error_anthropic_400_tool_schema.json") in str(recorded_case.value)
    answer, sent = anthropic_answer(mcp_specs)
    assert answer == "accepted"
    # Anthropic is sent its own form: nested oneOf/allOf and tuples kept, not flattened
    update_page = next(t for t in sent if t["name"] == "update_page")["input_schema"]
    assert update_page["properties"]["data"] == {
        "allOf": [{"type": "object", "properties": {}}, {"required": ["a"], "properties": {}}]
    }
    locate = next(t for t in sent if t["name"] == "locate")["input_schema"]
    assert "prefixItems" in locate["properties"]["at"]


def test_deepseek_refuses_a_root_that_is_not_an_object_and_accepts_it_wrapped() -> None:
    raw = {"type": "string", "description": "the address"}

    def respond(request: RecordedRequest) -> Any:
        function = request.json["tools"][0]["function"]
        if deepseek_refusal(function["name"], function["parameters"]) is not None:
            return fixture_replies(WIRE / "error_deepseek_400_tool_schema.json")[0]
        return json_reply(completion("accepted"))

    plain = ToolSpec(name="send_email", description="Send.", parameters=raw)
    with pytest.raises(ProviderError) as refused:
        openai_answer([plain], respond)
    assert recorded("error_deepseek_400_tool_schema.json") in str(refused.value)
    schema, wrapped = normalize_schema(raw)
    tool: Tool = schema_tool("send_email", "Send.", schema, str)
    assert wrapped and openai_answer([tool.spec], respond) == "accepted"


def test_the_recorded_errors_are_the_ones_reproduced() -> None:
    for name in ("openai", "anthropic", "deepseek"):
        assert list(Path(WIRE).glob(f"error_{name}_400_tool_schema.json"))
