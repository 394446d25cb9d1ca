"""``reactloop resume`` keeps the run's answer checks and its cost budget: the answer is
refused by the same ``--verify`` command, shown the same ``--checklist`` (once in the whole
run), validated against the same ``--output-schema``, and its cost is counted from the
recorded usage at the price ``--prices`` gave (``--max-cost`` raised or not). The files'
content is recorded: the resumed run goes on with what the run read, whatever became of the
files since. In the library a mismatch of the output type or the recorded checks is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers import reactloop
from reactloop import Agent, Journal, Limits, ScriptedModel, read_journal, tool
from reactloop.errors import UsageError


@tool(read_only=True)
def calculator(expression: str) -> str:
    """Evaluate an expression.

    Args:
        expression: what to evaluate
    """
    return "5"


USAGE = {"input_tokens": 1000, "output_tokens": 100}
PRICE = {"input": 2.0, "output": 10.0}  # dollars per million tokens: 0.003 a turn


def turn(**fields: Any) -> dict[str, Any]:
    return {**fields, "usage": USAGE}


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def scripted(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    (tmp_path / "script.json").write_text(json.dumps(turns), encoding="utf-8")
    return "scripted:script.json"


def test_a_resumed_answer_is_refused_by_the_runs_verify_command(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = scripted(
        tmp_path,
        [
            turn(tool_calls=[write("note.txt", "x")]),
            turn(content="early"),  # refused: done.txt is not there yet
            turn(tool_calls=[write("done.txt", "yes")]),
            turn(content="finished"),
        ],
    )
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "work", "--model", model, "--tools", "files", "--workspace", str(workspace),
        "--verify", "test -f done.txt", "--max-steps", "1", "--trace", str(trace), cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    assert read_journal(trace)[0]["config"]["checks"]["verify"] == "test -f done.txt"

    given = ["--tools", "files", "--workspace", "ws", "--verify", "test -f done.txt"]
    resumed = reactloop("resume", str(trace), *given, "--max-steps", "6", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answer"] == "finished"
    checks = [(e["kind"], e["passed"]) for e in read_journal(trace) if e["type"] == "check"]
    assert checks == [("verify", False), ("verify", True)]


def test_the_checklist_schema_and_price_the_run_read_go_on(tmp_path: Path) -> None:
    checklist = tmp_path / "checklist.md"
    checklist.write_text("- the number is checked\n", encoding="utf-8")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}},
                                  "required": ["n"]}), encoding="utf-8")  # fmt: skip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"*": PRICE}), encoding="utf-8")
    model = scripted(
        tmp_path,
        [
            turn(tool_calls=[{"name": "calculator", "arguments": {"expression": "2+3"}}]),
            turn(content='{"n": "five"}'),  # not valid against the schema: tried again
            turn(content='{"n": 5}'),  # the first valid answer: the checklist is shown
            turn(content='{"n": 5}'),
        ],
    )
    trace = tmp_path / "run.jsonl"
    first = reactloop(
        "run", "add", "--model", model, "--checklist", str(checklist), "--output-schema",
        str(schema), "--prices", str(prices), "--max-cost", "1", "--max-steps", "1",
        "--trace", str(trace), cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    config = read_journal(trace)[0]["config"]
    assert config["checks"]["checklist"] == ["the number is checked"]
    assert config["price"]["rates"]["input"] == 2.0
    for path in (checklist, schema, prices):  # the run read them: their content is recorded
        path.unlink()
    spent = tmp_path / "spent.jsonl"
    shutil.copy(trace, spent)

    resumed = reactloop("resume", str(trace), "--max-steps", "6", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    payload = json.loads(resumed.stdout)
    assert payload["output"] == {"n": 5} and payload["model_calls"] == 4
    assert payload["cost"] == pytest.approx(4 * 0.003)  # the recorded turn counted too
    events = read_journal(trace)
    assert [e["kind"] for e in events if e["type"] == "check"] == ["checklist"]
    assert any(e["type"] == "warning" and e["kind"] == "invalid_output" for e in events)

    # the recorded turn cost 0.003: a budget below it stops the run before its next call
    lowered = reactloop(
        "resume", str(spent), "--max-steps", "6", "--max-cost", "0.002", "--json", cwd=tmp_path
    )
    assert lowered.returncode == 1, lowered.stderr
    assert json.loads(lowered.stdout)["stop_reason"] == "max_cost"
    assert json.loads(lowered.stdout)["model_calls"] == 1


def test_max_cost_on_resume_needs_the_recorded_price(tmp_path: Path) -> None:
    model = scripted(tmp_path, [turn(tool_calls=[{"name": "calculator",
                                                  "arguments": {"expression": "1"}}]),
                                turn(content="1")])  # fmt: skip
    trace = tmp_path / "run.jsonl"
    first = reactloop("run", "one", "--model", model, "--max-steps", "1", "--trace", str(trace),
                      cwd=tmp_path)  # fmt: skip
    assert first.returncode == 1, first.stderr
    before = trace.read_bytes()
    refused = reactloop("resume", str(trace), "--max-cost", "1", cwd=tmp_path)
    assert refused.returncode == 2
    assert "the agent has no price" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert trace.read_bytes() == before


def test_a_library_resume_refuses_another_output_type(tmp_path: Path) -> None:
    turns: list[Any] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]},
        {"content": "5"},
    ]
    tools = [calculator]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        agent = Agent(
            ScriptedModel(turns),
            tools,
            journal=journal,
            output_type=int,
            limits=Limits(max_model_calls=1),
        )
        assert agent.run("add").stop_reason == "max_model_calls"
    with pytest.raises(UsageError, match="had an output schema, and the agent has no output"):
        Agent(ScriptedModel(turns), tools).resume(trace)
    with pytest.raises(UsageError, match="another schema"):
        Agent(ScriptedModel(turns), tools, output_type=str).resume(trace)
    resumed = Agent(ScriptedModel(turns), tools, output_type=int).resume(
        trace, limits=Limits(max_model_calls=3)
    )
    assert resumed.stop_reason == "final_answer" and resumed.output == 5


@pytest.mark.parametrize(
    "answer",
    ["5", {"tool_calls": [{"name": "final_answer", "arguments": {"value": 5}}]}],
    ids=["text", "final_answer-tool"],
)
def test_a_typed_answer_journaled_without_its_stop_is_judged_on_resume(
    tmp_path: Path, answer: Any
) -> None:
    """Killed after the answer's turn, before its stop: the resumed run reads that turn as
    the run would have (its typed value; the ``final_answer`` call answered, not run)."""
    turns: list[Any] = [
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]},
        answer,
    ]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        full = Agent(ScriptedModel(turns), [calculator], journal=journal, output_type=int).run(
            "add"
        )
    assert full.output == 5
    lines = trace.read_bytes().split(b"\n")
    last_turn = max(i for i, line in enumerate(lines) if b'"type":"turn"' in line)
    trace.write_bytes(b"\n".join(lines[: last_turn + 1]) + b"\n")
    resumed = Agent(ScriptedModel(turns), [calculator], output_type=int).resume(trace)
    assert (resumed.stop_reason, resumed.output, resumed.model_calls) == ("final_answer", 5, 2)
    assert [m.to_dict() for m in resumed.history] == [m.to_dict() for m in full.history]


def _invalid(value: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "final_answer", "arguments": {"value": value}}]}


@pytest.mark.parametrize("cut", ["after_warning", "after_turn"])
def test_a_typed_runs_invalid_answers_in_a_row_go_on_counting_on_resume(
    tmp_path: Path, cut: str
) -> None:
    """Three invalid answers in a row end a typed run (``max_format_errors``): killed after
    the second (its warning journaled) or right after the third turn, the resumed run stops at
    the third, as the run did, not three more later."""
    turns: list[Any] = [_invalid(value) for value in ("abc", "def", "ghi", "x", 5)]
    limits = Limits(max_format_errors=3)
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        full = Agent(ScriptedModel(turns), [], journal=journal, output_type=int, limits=limits)
        result = full.run("a number")
    assert (result.stop_reason, result.model_calls) == ("format_errors", 3)
    lines = trace.read_bytes().split(b"\n")
    if cut == "after_warning":
        end = [i for i, line in enumerate(lines) if b'"kind":"invalid_output"' in line][1]
    else:
        end = [i for i, line in enumerate(lines) if b'"type":"turn"' in line][2]
    trace.write_bytes(b"\n".join(lines[: end + 1]) + b"\n")
    resumed = Agent(ScriptedModel(turns), [], output_type=int, limits=limits).resume(trace)
    assert (resumed.stop_reason, resumed.model_calls) == ("format_errors", 3)
    assert resumed.error == result.error
