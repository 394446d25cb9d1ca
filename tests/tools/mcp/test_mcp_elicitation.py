"""A server's question to the user (MCP elicitation): who answers, and the form's defaults
(SEP-1034). The conformance suite's ``elicitation-sep1034-client-defaults`` scenario runs the
same through HTTP (test_mcp_conformance.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from hypothesis import given
from hypothesis import strategies as st
from mcp_helpers import HERE

from reactloop import Toolbox, ToolCall
from reactloop.tools.mcp import MCPServers, ServerConfig
from reactloop.tools.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    answered,
    ask_on_terminal,
    sdk_callback,
    with_defaults,
)

FORM = {
    "type": "object",
    "properties": {
        "seats": {"type": "integer", "default": 2},
        "note": {"type": "string"},
        "vip": {"type": "boolean", "default": False},
    },
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=5,
)


@given(st.dictionaries(st.sampled_from(["seats", "note", "vip", "other"]), json_values))
def test_an_accepted_form_keeps_what_was_given_and_gets_the_defaults_of_the_rest(
    content: dict[str, Any],
) -> None:
    filled = with_defaults(FORM, content)
    assert {k: filled[k] for k in content} == content
    for name, spec in FORM["properties"].items():
        if name not in content:
            assert filled.get(name, "absent") == spec.get("default", "absent")


def test_only_an_accepted_answer_carries_content() -> None:
    request = ElicitationRequest(server="s", message="How many?", schema=FORM)
    assert answered(request, ElicitationAnswer("accept")) == ElicitationAnswer(
        "accept", {"seats": 2, "vip": False}
    )
    assert answered(request, ElicitationAnswer("decline", {"seats": 9})) == ElicitationAnswer(
        "decline"
    )
    assert answered(request, ElicitationAnswer("cancel")).content == {}


def ask(params: Any, answer: ElicitationAnswer) -> tuple[Any, list[ElicitationRequest]]:
    asked: list[ElicitationRequest] = []

    def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return answer

    result = asyncio.run(sdk_callback(elicit, "shows")(None, params))
    return result, asked


def test_the_sdk_gets_the_answer_and_the_answerer_sees_the_server_and_its_form() -> None:
    params = types.ElicitRequestFormParams(message="How many seats?", requested_schema=FORM)
    result, asked = ask(params, ElicitationAnswer("accept", {"seats": 4}))
    assert asked == [ElicitationRequest(server="shows", message="How many seats?", schema=FORM)]
    assert json.loads(result.model_dump_json(exclude_none=True)) == {
        "action": "accept", "content": {"seats": 4, "vip": False}}  # fmt: skip
    declined, _ = ask(params, ElicitationAnswer("decline"))
    assert (declined.action, declined.content) == ("decline", None)


def test_a_question_for_a_url_is_declined_without_asking() -> None:
    params = types.ElicitRequestURLParams(
        mode="url", message="Log in", url="https://example.com/login", elicitation_id="e1"
    )
    result, asked = ask(params, ElicitationAnswer("accept", {}))
    assert (result.action, asked) == ("decline", [])


def booked(elicit: Any) -> dict[str, Any]:
    """What ``elicit_server.py``'s ``book`` tool was told (over stdio, the handshake era: the
    SDK's stateless era has no request from server to client for its ``ctx.elicit``)."""
    server = HERE / "elicit_server.py"
    config = ServerConfig(name="shows", command=sys.executable, args=(str(server),),
                          protocol="legacy", call_timeout=30)  # fmt: skip
    with MCPServers([config], elicit=elicit) as servers:
        result = Toolbox(servers.tools).execute(
            ToolCall(id="1", name="book", arguments='{"show": "Hamlet"}')
        )
    assert result.ok, result.error
    told: dict[str, Any] = json.loads(json.loads(result.to_content())["output"])
    return told


def test_a_real_server_gets_the_answer_with_the_forms_defaults() -> None:
    asked: list[ElicitationRequest] = []

    def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"note": "aisle"})

    told = booked(elicit)
    assert told["action"] == "accept" and told["data"] == {"seats": 2, "note": "aisle"}
    assert [(r.server, r.message) for r in asked] == [("shows", "How many seats for Hamlet?")]


def test_a_real_server_told_no_hears_decline_and_without_an_answerer_cannot_ask() -> None:
    assert booked(lambda request: ElicitationAnswer("decline"))["action"] == "decline"
    assert "refused" in booked(None)  # the client did not say it can be asked


def on_terminal(lines: list[str], monkeypatch: Any) -> ElicitationAnswer:
    """``ask_on_terminal`` (``reactloop run --approve`` with MCP servers) given these lines."""
    typed = iter(lines)

    def answer(prompt: str = "") -> str:
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", answer)
    return ask_on_terminal(ElicitationRequest(server="shows", message="How many?", schema=FORM))


def test_the_terminal_asks_field_by_field_and_an_empty_line_keeps_the_default(
    monkeypatch: Any, capsys: Any
) -> None:
    got = on_terminal(["", "three", "3", "", "maybe", "no"], monkeypatch)
    assert got == ElicitationAnswer("accept", {"seats": 3, "vip": False})
    shown = capsys.readouterr().err
    assert "MCP server 'shows' asks: How many?" in shown
    assert "seats must be integer: 'three' is not" in shown and "'maybe' is not" in shown
    assert on_terminal(["y", "", "by the aisle", "true"], monkeypatch) == ElicitationAnswer(
        "accept", {"note": "by the aisle", "vip": True}
    )
    assert on_terminal(["n"], monkeypatch) == ElicitationAnswer("decline")
    assert on_terminal(["y", "2"], monkeypatch) == ElicitationAnswer("cancel")  # input ended
