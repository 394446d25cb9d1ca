"""``Agent(..., output_type=T)``: the answer becomes a validated ``T``, asked for as the
``final_answer`` tool (native), ``Finish[{...}]`` (text ReAct) or a JSON value in plain text;
an invalid answer is an observation, retried, counted, limited and journaled."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from reactloop import Agent, Journal, Limits, ScriptedModel, StopReason, read_journal, tool
from reactloop.errors import UsageError
from reactloop.output.json_schema import load_output_schema
from reactloop.output.spec import FINAL_TOOL, InvalidOutput, OutputSpec


class City(BaseModel):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: float
    y: float


@tool(read_only=True)
def population(name: str) -> int:
    """The population of a city."""
    return 2_100_000


def final(arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": FINAL_TOOL, "arguments": arguments}]}


def run(turns: list[Any], output_type: Any, tmp_path: Path, **limits: Any) -> Any:
    model = ScriptedModel(turns)
    journal = Journal(tmp_path / "run.jsonl")
    limit = Limits(**limits)
    agent = Agent(
        model,
        [population],
        output_type=output_type,
        journal=journal,
        limits=limit,
        protocol="native",
    )
    result = agent.run("Which city, and how many people?")
    journal.close()
    return result, model, read_journal(tmp_path / "run.jsonl")


def test_a_pydantic_model_through_the_final_answer_tool(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "population", "arguments": {"name": "Paris"}}]},
        final({"name": "Paris", "population": 2_100_000}),
    ]
    result, model, events = run(turns, City, tmp_path)
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert result.output == City(name="Paris", population=2_100_000)
    assert json.loads(result.answer) == {"name": "Paris", "population": 2_100_000}
    sent = [spec.name for spec in model.requests[0].tools]
    assert sent == ["population", FINAL_TOOL]
    schema = model.requests[0].tools[1].parameters
    assert schema["required"] == ["name", "population"]
    # The final call has its result: the history stays valid for any provider.
    assert result.history[-1].role == "tool"
    assert json.loads(result.history[-1].content)["ok"] is True
    assert events[0]["output_schema"]["title"] == "City"
    assert events[-1]["answer"] == result.answer
    assert result.tool_calls == 1  # the final answer is no tool call of the budget


def test_a_dataclass_as_a_json_object_in_plain_text(tmp_path: Path) -> None:
    result, _, _ = run(['Here it is:\n```json\n{"x": 1.5, "y": -2}\n```'], Point, tmp_path)
    assert result.output == Point(x=1.5, y=-2.0)
    assert result.answer.startswith("Here it is")  # the answer stays the text


@pytest.mark.parametrize("arguments", [{"value": 42}, '{"value": "42"}'])
def test_an_int_through_the_tool_travels_as_value(arguments: Any, tmp_path: Path) -> None:
    result, model, _ = run([final(arguments)], int, tmp_path)
    assert result.output == 42
    assert result.answer == "42"
    parameters = model.requests[0].tools[-1].parameters
    assert parameters["properties"]["value"] == {"type": "integer"}


def test_text_react_takes_a_bare_json_object_but_not_bare_prose() -> None:
    agent, _ = text_agent(['{"name": "Paris", "population": 1}'], City)
    assert agent.run("q").output == City(name="Paris", population=1)
    agent, _ = text_agent(["Thought: I wonder", "Finish[fine]"], str)
    result = agent.run("q")
    assert result.output == "fine"
    assert "format_error" in result.warnings[0]


def text_agent(turns: list[str], output_type: Any, **limits: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(turns)
    return Agent(model, [population], output_type=output_type, limits=Limits(**limits)), model


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Thought: done\nAction: Finish[42]", 42),
        ('Thought: done\nAction: Finish[{"value": 42}]', 42),
        ("Finish[ 7 ]", 7),
    ],
)
def test_text_react_finish_with_an_int(reply: str, expected: int) -> None:
    agent, model = text_agent([reply], int)
    assert agent.protocol == "text"
    result = agent.run("q")
    assert result.output == expected
    assert FINAL_TOOL not in [spec.name for spec in model.requests[0].tools]
    assert '"type": "integer"' in model.requests[0].messages[0].content


def test_text_react_finish_with_a_model_after_a_tool() -> None:
    agent, _ = text_agent(
        [
            "Thought: look it up\nAction: population[Paris]",
            'Thought: got it\nAction: Finish[{"name": "Paris", "population": 2100000}]',
        ],
        City,
    )
    result = agent.run("q")
    assert result.output == City(name="Paris", population=2_100_000)
    assert result.tool_calls == 1


def test_an_invalid_answer_is_an_observation_and_the_model_tries_again(tmp_path: Path) -> None:
    turns = [
        final({"name": "Paris"}),  # population missing
        '{"name": "Paris", "population": "many"}',  # not an int, as plain text
        final({"name": "Paris", "population": 3}),
    ]
    result, model, events = run(turns, City, tmp_path)
    assert result.stop_reason is StopReason.FINAL_ANSWER
    assert result.output == City(name="Paris", population=3)
    first_error = json.loads(model.requests[1].messages[-1].content)["error"]
    assert "population: Field required" in first_error
    notice = model.requests[2].messages[-1]
    assert notice.role == "user" and "population: Input should be a valid integer" in notice.content
    warnings = [e for e in events if e["type"] == "warning" and e["kind"] == "invalid_output"]
    assert [w["count"] for w in warnings] == [1, 2]
    assert sum("invalid_output" in w for w in result.warnings) == 2


def test_invalid_answers_in_a_row_reach_the_limit(tmp_path: Path) -> None:
    turns = [final({"name": "A"}), "no json here", final({"population": 1})]
    result, _, events = run(turns, City, tmp_path, max_format_errors=3)
    assert result.stop_reason is StopReason.FORMAT_ERRORS
    assert result.output is None and result.answer is None
    assert "3 answers in a row were invalid" in (result.error or "")
    assert events[-1]["stop_reason"] == "format_errors"


def test_a_good_step_between_invalid_answers_resets_the_count(tmp_path: Path) -> None:
    turns = [
        final({"name": "A"}),
        {"tool_calls": [{"name": "population", "arguments": {"name": "A"}}]},
        final({"name": "A"}),
        final({"name": "A", "population": 1}),
    ]
    result, _, _ = run(turns, City, tmp_path, max_format_errors=2)
    assert result.output == City(name="A", population=1)


def test_final_answer_beside_another_call_is_not_taken(tmp_path: Path) -> None:
    both = {
        "tool_calls": [
            {"name": "population", "arguments": {"name": "Paris"}},
            {"name": FINAL_TOOL, "arguments": {"name": "Paris", "population": 0}},
        ]
    }
    turns = [both, final({"name": "Paris", "population": 2_100_000})]
    result, model, _ = run(turns, City, tmp_path)
    assert result.output.population == 2_100_000
    replies = [json.loads(m.content) for m in model.requests[1].messages if m.role == "tool"]
    assert replies[0]["ok"] is False and "alone" in replies[0]["error"]
    assert replies[1] == {"ok": True, "output": 2_100_000}


def test_without_an_output_type_nothing_changes() -> None:
    model = ScriptedModel(['{"name": "x"}'])
    result = Agent(model, protocol="native").run("q")
    assert result.output is None and result.answer == '{"name": "x"}'


# Property tests of the readers: any text is a value or an InvalidOutput, never a crash.

CITY = OutputSpec(City)
INT = OutputSpec(int)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)
hostile = st.one_of(
    st.text(),
    st.integers(min_value=1, max_value=50_000).map(lambda n: "[" * n + "]" * n),
    st.integers(min_value=1, max_value=50_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(min_value=4_400, max_value=20_000).map(lambda n: '{"value": ' + "9" * n + "}"),
    json_values.map(json.dumps),
)


@given(hostile)
@settings(max_examples=150, deadline=None)
def test_reading_any_text_gives_a_value_or_invalid_output(text: str) -> None:
    for spec in (CITY, INT):
        for read in (spec.from_text, spec.from_arguments):
            try:
                read(text)
            except InvalidOutput as exc:
                assert str(exc)


@given(
    st.text(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from(["{}", "Answer: {}.", "```json\n{}\n```", "```\n{}\n```"]),
)
@settings(max_examples=150, deadline=None)
def test_a_city_in_any_wrapping_reads_back(name: str, people: int, wrapping: str) -> None:
    body = json.dumps({"name": name, "population": people})
    text = wrapping.replace("{}", body)
    if "}" in name or "{" in name:
        return  # prose braces may hide the object; the fenced and bare forms are enough
    assert CITY.from_text(text) == City(name=name, population=people)
    assert CITY.from_arguments(body) == City(name=name, population=people)


def test_a_json_schema_file_as_the_output_type(tmp_path: Path) -> None:
    schema_file = tmp_path / "answer.json"
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "people": {"type": "integer", "minimum": 0}},
        "required": ["city", "people"],
    }
    schema_file.write_text(json.dumps(schema), encoding="utf-8")
    turns = [final({"city": "Paris", "people": -1}), final({"city": "Paris", "people": 5})]
    result, model, events = run(turns, load_output_schema(schema_file), tmp_path)
    assert result.output == {"city": "Paris", "people": 5}
    assert model.requests[0].tools[-1].parameters == schema
    error = json.loads(model.requests[1].messages[-1].content)["error"]
    assert "people: -1 is less than the minimum of 0" in error
    assert events[0]["output_schema"] == schema


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "must be a JSON object"),
        ('{"type": 12}', "not a valid JSON Schema"),
        ("{", "is not JSON"),
    ],
)
def test_a_bad_schema_file_is_a_usage_error(content: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_output_schema(path)


def test_a_forced_answer_at_wind_down_is_typed_too(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "population", "arguments": {"name": "Paris"}}]},
        '{"name": "Paris", "population": 2100000}',
    ]
    result, model, _ = run(turns, City, tmp_path, max_model_calls=2)
    assert result.stop_reason is StopReason.FINAL_ANSWER and result.forced
    assert result.output == City(name="Paris", population=2_100_000)
    assert model.requests[1].tool_choice == "none"


def test_a_conversation_follow_up_keeps_the_output_type(tmp_path: Path) -> None:
    model = ScriptedModel([final({"value": 3}), final({"value": "four"}), final({"value": 4})])
    agent = Agent(model, output_type=int, protocol="native")
    first = agent.run("1 + 2?")
    second = agent.run("Plus one?", history=first)
    assert (first.output, second.output) == (3, 4)
    assert [m.role for m in second.history].count("system") == 1
