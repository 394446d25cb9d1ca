"""Replay of a tree of agents (``Agent.as_tool``): each sub-agent is replayed from its own
journal, its recorded turns against its real tools; no model of the tree is asked again."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reactloop import Agent, FunctionModel, Journal, Limits, ScriptedModel, Tool, tool
from reactloop.cli.trace import replay as replay_command
from reactloop.models.base import ModelRequest
from reactloop.replay import replay
from reactloop.tools.context import ToolContext
from reactloop.tools.registry import build_tools

# Room enough that no agent winds down: where parallel siblings share a tight budget, which of
# them finds it spent depends on their timing, in the replay as in the recorded run.
ROOMY = Limits(max_model_calls=40, max_tool_calls=40)


class World:
    """The leaves' one tool, which counts its real calls and can change its answer."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[str] = []
        self.people = 2_100_000

    def tool(self) -> Tool:
        @tool(read_only=True)
        def population(city: str) -> int:
            """The population of a city."""
            with self.lock:
                self.calls.append(city)
            return self.people

        return population


def asked_live(request: ModelRequest) -> Any:
    raise AssertionError("a replay asked a model")


def tree(world: World, *, live: bool) -> list[Tool]:
    """The root's tools: ``demographer`` (which has ``counter`` under it, a grandchild) and
    ``geographer``. ``live=False``: the same tree with models that fail if asked."""

    def model(turns: list[Any]) -> Any:
        return ScriptedModel(turns) if live else FunctionModel(asked_live)

    counter = Agent(
        model([{"tool_calls": [{"name": "population", "arguments": {"city": "Lyon"}}]}, "513k"]),
        [world.tool()],
        limits=ROOMY,
    )
    demographer = Agent(
        model(
            [
                {
                    "tool_calls": [
                        {"name": "population", "arguments": {"city": "Paris"}},
                        {"name": "counter", "arguments": {"task": "Count Lyon."}},
                    ]
                },
                "2.1 million people",
            ]
        ),
        [world.tool(), counter.as_tool("counter", "Counts people.")],
        limits=ROOMY,
    )
    geographer = Agent(
        model([{"tool_calls": [{"name": "population", "arguments": {"city": "Nice"}}]}, "small"]),
        [world.tool()],
        limits=ROOMY,
    )
    return [
        demographer.as_tool("demographer", "Answers questions about populations."),
        geographer.as_tool("geographer", "Answers questions about places."),
    ]


ROOT_TURNS: list[Any] = [
    {
        "tool_calls": [
            {"name": "demographer", "arguments": {"task": "How many live in Paris?"}},
            {"name": "geographer", "arguments": {"task": "How large is Nice?"}},
        ]
    },
    "Paris is big.",
]


def recorded(tmp_path: Path, world: World) -> Path:
    trace = tmp_path / "root.jsonl"
    with Journal(trace) as journal:
        result = Agent(
            ScriptedModel(ROOT_TURNS), tree(world, live=True), journal=journal, limits=ROOMY
        ).run("How big is Paris?")
    assert result.answer == "Paris is big."
    return trace


def test_each_child_is_replayed_from_its_journal_against_its_real_tools(tmp_path: Path) -> None:
    world = World()
    trace = recorded(tmp_path, world)
    assert sorted(world.calls) == ["Lyon", "Nice", "Paris"]
    world.calls.clear()
    report = replay(trace, tools=tree(world, live=False))
    assert report.identical, report.describe()
    assert report.result is not None and report.result.answer == "Paris is big."
    assert sorted(world.calls) == ["Lyon", "Nice", "Paris"]  # the tools ran again, no model
    paths = {child.agent_path: child for child in report.children}
    assert sorted(paths) == ["/demographer#1", "/geographer#2"] or sorted(paths) == [
        "/demographer#2",
        "/geographer#1",
    ]  # parallel children number themselves in the order they start
    [demographer] = [c for c in report.children if c.agent_path.startswith("/demographer")]
    [counter] = demographer.children
    assert counter.agent_path == demographer.agent_path + "/counter#1" and counter.identical
    assert counter.result is not None and counter.result.answer == "513k"
    assert report.to_dict()["children"][0]["identical"] is True


def test_a_divergence_in_a_grandchild_makes_the_tree_differ(tmp_path: Path) -> None:
    world = World()
    trace = recorded(tmp_path, world)
    world.people = 3  # the world changed since the recorded run
    report = replay(trace, tools=tree(world, live=False))
    assert not report.identical
    [demographer] = [c for c in report.children if c.agent_path.startswith("/demographer")]
    assert not demographer.identical and not demographer.children[0].identical
    text = report.describe()
    assert "/counter#1 (" in text and "population" in text
    # each child still got its recorded answer: the tree's turns are the recorded ones
    assert report.result is not None and report.result.answer == "Paris is big."


def test_a_child_whose_journal_is_gone_gives_its_recorded_observation(tmp_path: Path) -> None:
    world = World()
    trace = recorded(tmp_path, world)
    starts = [json.loads(line) for line in trace.read_text().splitlines()]
    starts = [e for e in starts if e["type"] == "child_start"]
    assert all(e["call_id"] for e in starts)  # each names the call that ran it
    [geographer] = [e for e in starts if e["tool"] == "geographer"]
    Path(geographer["trace"]).unlink()
    world.calls.clear()
    report = replay(trace, tools=tree(world, live=False))
    assert report.identical, report.describe()
    assert "Nice" not in world.calls  # not replayed: its recorded answer stood in
    assert [c.agent_path.split("#")[0] for c in report.children] == ["/demographer"]


def test_the_cli_replays_a_tree_from_the_journals_alone(tmp_path: Path) -> None:
    """Without the agents' code: the agent tools come from the recorded schemas and each
    child's tools from its ``run_start`` (its ``tools`` families)."""
    calc = Agent(
        ScriptedModel(
            [{"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]}, "42"]
        ),
        build_tools(("calculator",), ToolContext()),
        config={"tools": ["calculator"]},  # as ``reactloop run --tools calculator`` records
    )
    trace = tmp_path / "root.jsonl"
    turns: list[Any] = [
        {"tool_calls": [{"name": "math", "arguments": {"task": "6 times 7?"}}]},
        "It is 42.",
    ]
    with Journal(trace) as journal:
        Agent(
            ScriptedModel(turns),
            [calc.as_tool("math", "Does sums.")],
            journal=journal,
            config={"tools": "none"},
        ).run("What is 6*7?")
    out = CliRunner().invoke(replay_command, [str(trace), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output.splitlines()[-1])  # after the plan (stderr)
    assert data["identical"] is True
    [child] = data["children"]
    assert child["agent_path"] == "/math#1" and child["answer"] == "42"


@pytest.mark.parametrize("moved", [False, True])
def test_children_journals_are_found_beside_a_moved_root_journal(
    tmp_path: Path, moved: bool
) -> None:
    world = World()
    trace = recorded(tmp_path / "a", world)
    if moved:
        target = tmp_path / "b"
        target.mkdir()
        for path in (tmp_path / "a").iterdir():
            path.rename(target / path.name)
        trace = target / trace.name
    report = replay(trace, tools=tree(world, live=False))
    assert report.identical and len(report.children) == 2
