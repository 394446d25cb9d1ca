"""Typed answers: as a reply constrained by ``text.format`` where the server takes it beside
tools (OpenAI's own API), else through the run's ``final_answer`` tool."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from reactloop import Agent, tool
from reactloop.models.responses import OpenAIResponsesModel
from reactloop.testing import FakeResponsesServer, function_call, response


class City(BaseModel):
    name: str
    population: int


@tool(read_only=True)
def population(name: str) -> int:
    """The population of a city.

    Args:
        name: the city
    """
    return 2_100_000


ANSWER: dict[str, Any] = {"name": "Paris", "population": 2100000}


def test_a_typed_answer_is_asked_for_with_text_format() -> None:
    script: list[Any] = [response(calls=[function_call("population", {"name": "Paris"})]),
              json.dumps(ANSWER)]  # fmt: skip
    with FakeResponsesServer(script) as server:
        model = OpenAIResponsesModel(model="m", base_url=server.base_url, answers_json_schema=True)
        result = Agent(model, [population], output_type=City).run("People in Paris?")
    assert result.output == City(**ANSWER)
    for request in server.requests:
        assert [t["name"] for t in request.json["tools"]] == ["population"]
        fmt = request.json["text"]["format"]
        assert (fmt["type"], fmt["name"], fmt["strict"]) == ("json_schema", "final_answer", False)
        assert set(fmt["schema"]["properties"]) == {"name", "population"}


def test_elsewhere_the_final_answer_tool_asks_for_it() -> None:
    answer = function_call("final_answer", ANSWER)
    with FakeResponsesServer([response(calls=[answer])]) as server:
        model = OpenAIResponsesModel(model="m", base_url=server.base_url)
        assert not model.answers_json_schema
        result = Agent(model, [population], output_type=City).run("People in Paris?")
    assert result.output == City(**ANSWER)
    assert "text" not in server.requests[0].json
    assert "final_answer" in [t["name"] for t in server.requests[0].json["tools"]]
    assert OpenAIResponsesModel(model="m").answers_json_schema  # OpenAI's own host
