"""Typed answers as a JSON-schema reply where the provider constrains replies to one.

OpenAI takes ``response_format`` beside tools, so the answer is asked for as the reply itself
(no ``final_answer`` tool); servers that constrain the whole reply by grammar (vLLM, SGLang,
llama.cpp, Ollama) get it only on calls that may not call a tool (the wind-down), and keep the
``final_answer`` tool otherwise; the others (DeepSeek, Qwen) never get it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from reactloop import Agent, Limits, tool
from reactloop.models.openai import OpenAIChatModel
from reactloop.testing import FakeOpenAIServer, completion, tool_call


class City(BaseModel):
    name: str
    population: int


@tool(read_only=True)
def population(name: str) -> int:
    """The population of a city."""
    return 2_100_000


def _model(server: FakeOpenAIServer, provider: str) -> OpenAIChatModel:
    """The adapter for ``provider`` at the fake server; for ``openai`` as if it were OpenAI's
    own host (at any other host an ``openai:`` model is taken for a compatible server)."""
    mode = "with_tools" if provider == "openai" else None
    return OpenAIChatModel(
        model="m", base_url=server.base_url, provider=provider, api_key="k", json_schema=mode
    )


def _agent(server: FakeOpenAIServer, provider: str, **limits: Any) -> Agent:
    return Agent(_model(server, provider), [population], output_type=City, limits=Limits(**limits))


def _tool_names(request: Any) -> list[str]:
    return [t["function"]["name"] for t in request.json.get("tools", [])]


def test_openai_asks_for_the_answer_as_a_json_schema_reply() -> None:
    answer = json.dumps({"name": "Paris", "population": 2100000})
    replies = [completion(tool_calls=[tool_call("population", {"name": "Paris"})]), answer]
    with FakeOpenAIServer(replies) as server:
        result = _agent(server, "openai").run("How many people live in Paris?")
    assert result.output == City(name="Paris", population=2_100_000)
    for request in server.requests:
        assert _tool_names(request) == ["population"]  # no final_answer tool
        fmt = request.json["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "final_answer"
        assert set(fmt["json_schema"]["schema"]["properties"]) == {"name", "population"}
    system = server.requests[0].json["messages"][0]["content"]
    assert "reply with the answer alone, as JSON" in system


def test_an_invalid_json_reply_is_an_observation_and_the_model_tries_again() -> None:
    replies = ['{"name": "Paris"}', '{"name": "Paris", "population": 2100000}']
    with FakeOpenAIServer(replies) as server:
        result = _agent(server, "openai").run("Paris?")
    assert result.output == City(name="Paris", population=2_100_000)
    assert any(w.startswith("invalid_output: population") for w in result.warnings)
    last = server.requests[-1].json["messages"][-1]
    assert last["role"] == "user" and "population" in last["content"]


def test_an_int_answer_travels_wrapped_in_value() -> None:
    with FakeOpenAIServer(['{"value": 42}']) as server:
        result = Agent(_model(server, "openai"), output_type=int).run("6 * 7?")
    assert result.output == 42
    schema = server.requests[0].json["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["value"] and schema["properties"]["value"]["type"] == "integer"


def test_a_grammar_server_gets_the_schema_only_when_no_tool_may_be_called() -> None:
    calls = [completion(tool_calls=[tool_call("population", {"name": n})]) for n in "ABC"]
    answer = '{"name": "Paris", "population": 2100000}'
    with FakeOpenAIServer([*calls, answer]) as server:
        result = _agent(server, "vllm", max_model_calls=4).run("Paris?")
    assert result.output == City(name="Paris", population=2_100_000)
    *tooled, last = server.requests
    for request in tooled:
        assert "response_format" not in request.json
        assert "final_answer" in _tool_names(request)
    assert last.json["tool_choice"] == "none"
    assert last.json["response_format"]["json_schema"]["name"] == "final_answer"


def test_a_provider_without_json_schema_replies_never_gets_one() -> None:
    calls = [completion(tool_calls=[tool_call("population", {"name": n})]) for n in "ABC"]
    answer = '{"name": "Paris", "population": 2100000}'
    with FakeOpenAIServer([*calls, answer]) as server:
        result = _agent(server, "deepseek", max_model_calls=4).run("Paris?")
    assert result.output == City(name="Paris", population=2_100_000)
    assert all("response_format" not in r.json for r in server.requests)
    assert all("final_answer" in _tool_names(r) for r in server.requests[:-1])


def test_a_run_without_a_typed_answer_sends_no_response_format() -> None:
    with FakeOpenAIServer(["Paris."]) as server:
        assert Agent(_model(server, "openai")).run("Capital of France?").answer == "Paris."
    assert "response_format" not in server.requests[0].json


def test_an_openai_model_at_another_host_is_taken_for_a_compatible_server() -> None:
    official = OpenAIChatModel(model="m", api_key="k")
    elsewhere = OpenAIChatModel(model="m", base_url="http://127.0.0.1:8000/v1", api_key="k")
    assert (official.json_schema, official.answers_json_schema) == ("with_tools", True)
    assert (elsewhere.json_schema, elsewhere.answers_json_schema) == ("alone", False)
    calls = [completion(tool_calls=[tool_call("population", {"name": n})]) for n in "ABC"]
    answer = '{"name": "Paris", "population": 2100000}'
    with FakeOpenAIServer([*calls, answer]) as server:
        model = OpenAIChatModel(model="m", base_url=server.base_url, api_key="k")
        agent = Agent(model, [population], output_type=City, limits=Limits(max_model_calls=4))
        assert agent.run("Paris?").output == City(name="Paris", population=2_100_000)
    *tooled, last = server.requests
    assert all("response_format" not in r.json for r in tooled)
    assert all("final_answer" in _tool_names(r) for r in tooled)
    assert last.json["response_format"]["json_schema"]["name"] == "final_answer"
