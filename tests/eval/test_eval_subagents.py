"""An eval task whose agent has sub-agents is scored as one agent: its record holds the tree's
model calls, tokens and cost, the calls of every agent (``must_call`` is met by a child's
call), and each child with its own share; the children's journals lie beside the episode's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import FunctionModel, read_journal
from reactloop.eval import EpisodeRecord, Rung, Task
from reactloop.eval.run.episode import run_episode
from reactloop.eval.run.spec import EpisodeSpec
from reactloop.eval.tasks.agent_specs import SubAgent
from reactloop.eval.tasks.tasks import task_from_dict
from reactloop.models.base import ModelRequest

RATES = {"input": 1.0, "output": 2.0}  # $ per 1M tokens
NOTES = {"population": 2_100_000}


def tree_model(_: Any) -> FunctionModel:
    """The same model for the root and its child, as one rung serves both: the root hands the
    look-up to ``researcher`` and doubles its answer; the researcher calls ``lookup``."""

    def reply(request: ModelRequest) -> dict[str, Any]:
        offered = {spec.name for spec in request.tools}
        results = [m for m in request.messages if m.role == "tool"]
        usage = {"input_tokens": 100, "output_tokens": 10}
        if "researcher" in offered and not results:
            task = {"task": "What is the population?"}
            return {"tool_calls": [{"name": "researcher", "arguments": task}], "usage": usage}
        if "researcher" in offered and len(results) == 1:
            expression = {"expression": "2100000 * 2"}
            return {"tool_calls": [{"name": "calculator", "arguments": expression}], "usage": usage}
        if "researcher" in offered:
            return {"content": "4200000", "usage": usage}
        if not results:
            key = {"key": "population"}
            return {"tool_calls": [{"name": "lookup", "arguments": key}], "usage": usage}
        return {"content": "2100000", "usage": usage}

    return FunctionModel(reply)


def episode(tmp_path: Path, **task: Any) -> tuple[EpisodeRecord, Path]:
    rung = Rung(label="tree", spec="function", prices=RATES, factory=tree_model)
    researcher = SubAgent(name="researcher", description="Looks things up.", tools=("lookup",))
    made = Task(
        id="double",
        task="Double the population.",
        expected=4_200_000,
        notes=NOTES,
        agents=(researcher,),
        **task,
    )
    spec = EpisodeSpec(suite="tree", task=made, rung=rung, protocol="native", repeat=0)
    trace = tmp_path / "traces" / "episode.jsonl"
    trace.parent.mkdir()
    record = run_episode(spec, trace)
    assert record is not None
    return record, trace


def test_the_record_is_the_trees_and_lists_the_children(tmp_path: Path) -> None:
    record, trace = episode(tmp_path, must_call=("lookup",))
    assert record.status == "passed", record  # ``lookup`` was called by the child
    assert record.run is not None and record.children is not None
    assert record.run.model_calls == 5  # the root's 3 and the researcher's 2
    assert record.run.usage["input_tokens"] == 500 and record.run.usage["output_tokens"] == 50
    assert record.run.cost == pytest.approx((500 * 1.0 + 50 * 2.0) / 1e6)
    assert record.run.called == ["researcher", "calculator", "lookup"]
    [child] = record.children
    assert child["agent_path"] == "/researcher#1" and child["stop_reason"] == "final_answer"
    assert child["model_calls"] == 2 and child["called"] == ["lookup"]
    assert child["cost"] == pytest.approx((200 * 1.0 + 20 * 2.0) / 1e6)
    assert (trace.parent / child["trace"]).is_file()  # beside the episode's journal
    json.dumps(record.to_dict())  # plain JSON, as the store writes it


def test_a_childs_call_counts_against_must_not_call(tmp_path: Path) -> None:
    record, _ = episode(tmp_path, must_not_call=("lookup",))
    assert record.status == "failed"
    assert record.check_detail == "lookup was called"


def test_a_suite_line_declares_sub_agents(tmp_path: Path) -> None:
    line = {
        "id": "t",
        "task": "Double it.",
        "expected": 2,
        "agents": [
            {"name": "researcher", "tools": "lookup,calculator", "instructions": "Be brief."}
        ],
    }
    task = task_from_dict(line, base=tmp_path)
    [agent] = task.agents
    assert (agent.name, agent.tools, agent.instructions) == (
        "researcher",
        ("lookup", "calculator"),
        "Be brief.",
    )
    assert task.to_dict()["agents"][0]["tools"] == ["lookup", "calculator"]
    with pytest.raises(ValueError, match="needs a 'name'"):
        task_from_dict({**line, "agents": [{"tools": ["lookup"]}]}, base=tmp_path)
    with pytest.raises(ValueError, match="tools must be a list"):
        task_from_dict({**line, "agents": [{"name": "r", "tools": 3}]}, base=tmp_path)


def cut_after(path: Path, kind: str) -> None:
    """The journal as a kill would leave it: its lines up to its first ``kind`` event."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    keep = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == kind) + 1
    path.write_text("".join(lines[:keep]), encoding="utf-8")


def test_a_resumed_tree_episode_counts_its_child_once(tmp_path: Path) -> None:
    """``--resume`` of an episode killed while its researcher ran (after its ``lookup``): the
    tree goes on (the researcher in its own journal, resumed), and the record is the one an
    uninterrupted episode gets: the child listed once, its calls and tokens counted once."""
    (tmp_path / "whole").mkdir()
    (tmp_path / "killed").mkdir()
    whole, _ = episode(tmp_path / "whole", must_call=("lookup",))
    _, trace = episode(tmp_path / "killed", must_call=("lookup",))
    cut_after(trace, "child_start")
    cut_after(trace.with_name("episode.researcher-1.jsonl"), "tool_result")
    spec = EpisodeSpec(
        suite="tree",
        task=Task(
            id="double",
            task="Double the population.",
            expected=4_200_000,
            notes=NOTES,
            agents=(
                SubAgent(name="researcher", description="Looks things up.", tools=("lookup",)),
            ),
            must_call=("lookup",),
        ),
        rung=Rung(label="tree", spec="function", prices=RATES, factory=tree_model),
        protocol="native",
        repeat=0,
        continue_journal=True,
    )
    record = run_episode(spec, trace)
    assert record is not None and record.status == "passed", record
    assert record.resumed is not None and record.resumed.step == 1
    assert sorted(p.name for p in trace.parent.iterdir()) == [
        "episode.jsonl",
        "episode.researcher-1.jsonl",
    ]  # the researcher went on in its journal: none new
    child_events = read_journal(trace.with_name("episode.researcher-1.jsonl"))
    assert [e["type"] for e in child_events].count("resume") == 1
    compared = ("model_calls", "tool_calls", "usage", "cost", "called")
    got, want = record.to_dict(), whole.to_dict()
    assert {k: got[k] for k in compared} == {k: want[k] for k in compared}
    [child] = got["children"]
    [whole_child] = want["children"]
    assert child == whole_child


def test_an_episode_without_sub_agents_does_not_read_its_journal_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its record's figures were counted as the events went by: no child to look for."""
    from reactloop.eval.run import agent_tree

    reads: list[Path] = []
    real = agent_tree.read_journal
    monkeypatch.setattr(agent_tree, "read_journal", lambda path: reads.append(path) or real(path))
    rung = Rung(label="tree", spec="function", factory=tree_model)
    made = Task(
        id="alone", task="What is the population?", expected=2_100_000, notes=NOTES,
        tools=("lookup",),
    )  # fmt: skip
    spec = EpisodeSpec(suite="tree", task=made, rung=rung, protocol="native", repeat=0)
    record = run_episode(spec, tmp_path / "alone.jsonl")
    assert record is not None and record.status == "passed" and record.children is None
    assert reads == []
    episode(tmp_path)  # with sub-agents, the journal is read for them
    assert reads
