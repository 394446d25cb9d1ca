"""Sub-agents (``Agent.as_tool``): one budget for the tree, cancellation, depth, observations.

The trees are driven by ``FunctionModel``s: each agent that has agent tools asks for two (or
one) children in every turn, the leaves call a read-only tool in every turn, and every agent
answers when it is told to wind down; so only the limits end the runs, and the counters below
see every model call and tool call the whole tree really made.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from reactloop import (
    Agent,
    Defer,
    FunctionModel,
    Journal,
    Limits,
    ScriptedModel,
    StopReason,
    Tool,
    tool,
)
from reactloop.cli.app import main
from reactloop.models.base import ModelRequest
from reactloop.usage import usage_report

BIG = Limits(
    max_model_calls=10_000,
    max_tool_calls=10_000,
    max_seconds=60,
    near_repeat_warn=None,
    near_repeat_stop=None,
)


class Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.model_calls = 0
        self.tool_calls = 0
        self.tokens = 0
        self.numbers = itertools.count()
        self.last_model_call = 0.0

    def model_call(self, tokens: int) -> int:
        with self.lock:
            self.last_model_call = time.monotonic()
            self.model_calls += 1
            self.tokens += tokens
            return next(self.numbers)

    def tool_call(self) -> int:
        with self.lock:
            self.tool_calls += 1
            return next(self.numbers)


class PerToken:
    def cost(self, usage: Any) -> float:
        return usage.total_tokens * 0.001


def greedy(counts: Counts, tools: list[str], per_turn: int) -> FunctionModel:
    """Calls ``per_turn`` of ``tools`` in every turn (fresh arguments), answers when told to."""

    def reply(request: ModelRequest) -> dict[str, Any]:
        n = counts.model_call(10)
        usage = {"input_tokens": 6, "output_tokens": 4}
        if request.tool_choice == "none":
            return {"content": f"answer {n}", "usage": usage}
        calls = [
            {"name": tools[i % len(tools)], "arguments": _arguments(tools[i % len(tools)], n, i)}
            for i in range(per_turn)
        ]
        return {"tool_calls": calls, "usage": usage}

    return FunctionModel(reply, name="greedy")


def _arguments(name: str, n: int, i: int) -> dict[str, Any]:
    return {"q": f"{n}.{i}"} if name == "probe" else {"task": f"task {n}.{i}"}


def counted(agent_tool: Tool, counts: Counts) -> Tool:
    """The agent tool, each of its runs counted as the tool call it is for its parent."""
    function = agent_tool.function

    def delegate(task: str) -> Any:
        counts.tool_call()
        return function(task=task)

    return dataclasses.replace(agent_tool, function=delegate)


def tree(counts: Counts, limits: Limits, price: Any = None) -> Agent:
    """Depth 3: the root asks two children at once, each child two grandchildren at once,
    each grandchild one leaf; a leaf probes, one read-only call a turn."""

    @tool(read_only=True)
    def probe(q: str) -> str:
        """Probe something."""
        return f"probe {counts.tool_call()} for {q}"

    def agent(name: str, tools: list[Tool], per_turn: int, own: Limits = BIG) -> Agent:
        model = greedy(counts, [t.name for t in tools], per_turn)
        return Agent(model, tools, limits=own, price=price)

    leaf = agent("leaf", [probe], 1)
    grandchild = agent("grandchild", [counted(leaf.as_tool("leaf", "A leaf."), counts)], 1)
    child = agent("child", [counted(grandchild.as_tool("grandchild", "G."), counts)], 2)
    team = counted(child.as_tool("child", "A child."), counts)
    return agent("root", [team], 2, own=limits)


def test_the_model_call_limit_holds_for_the_tree() -> None:
    counts = Counts()
    result = tree(counts, dataclasses.replace(BIG, max_model_calls=30)).run("go")
    assert counts.model_calls <= 30
    assert result.model_calls == counts.model_calls  # the root's counts are the tree's
    assert counts.model_calls >= 25  # the tree did spend it: the limit stopped it
    assert result.forced and result.answer is not None  # the root kept its last word


def test_the_tool_call_limit_holds_for_the_tree() -> None:
    counts = Counts()
    result = tree(counts, dataclasses.replace(BIG, max_tool_calls=40)).run("go")
    assert counts.tool_calls <= 40
    assert result.tool_calls == counts.tool_calls
    assert counts.tool_calls >= 30
    assert result.forced and result.answer is not None  # told no tool call is left


def test_the_token_limit_holds_for_the_tree_up_to_the_calls_in_flight() -> None:
    counts = Counts()
    result = tree(counts, dataclasses.replace(BIG, max_tokens=400)).run("go")
    # a check lets a call go while fewer than 400 are spent; at most 4 agents (one in each
    # grandchild's subtree) can be in a call at once, 10 tokens each
    assert counts.tokens < 400 + 4 * 10
    assert result.usage.total_tokens == counts.tokens
    assert counts.tokens >= 300


def test_the_cost_limit_holds_for_the_tree_up_to_the_calls_in_flight() -> None:
    counts = Counts()
    limits = dataclasses.replace(BIG, max_cost=0.5)
    result = tree(counts, limits, price=PerToken()).run("go")
    assert counts.tokens * 0.001 < 0.5 + 4 * 0.01
    assert result.cost == pytest.approx(counts.tokens * 0.001)
    assert counts.tokens >= 350


def test_the_time_limit_holds_for_the_tree() -> None:
    counts = Counts()
    started = time.monotonic()
    result = tree(counts, dataclasses.replace(BIG, max_seconds=0.5)).run("go")
    assert result.stop_reason is StopReason.TIMEOUT
    assert time.monotonic() - started < 3.0  # 0.5 s, and the children's own ends
    # no level began a call after it (checked before each call; the slack is the time from
    # the check to the model's function, on a busy machine)
    assert counts.last_model_call < started + 0.5 + 0.4
    assert result.model_calls > 100


def test_parallel_children_run_at_once() -> None:
    both = threading.Barrier(2, timeout=10)  # broken unless the two specialists overlap

    @tool(read_only=True)
    def meet(q: str) -> str:
        """Wait for the other specialist."""
        both.wait()
        return "met"

    def specialist() -> Agent:
        turns = [{"tool_calls": [{"name": "meet", "arguments": {"q": "x"}}]}, "ok"]
        return Agent(ScriptedModel(turns), [meet])

    one, two = specialist().as_tool("one", "One."), specialist().as_tool("two", "Two.")
    assert one.read_only and two.read_only
    calls = [
        {"name": "one", "arguments": {"task": "a"}},
        {"name": "two", "arguments": {"task": "b"}},
    ]
    root = Agent(ScriptedModel([{"tool_calls": calls}, "both ok"]), [one, two])
    result = root.run("go")
    assert result.answer == "both ok"
    observations = [json.loads(m.content) for m in result.history if m.role == "tool"]
    assert (
        observations
        == [{"ok": True, "output": {"answer": "ok", "stop_reason": "final_answer"}}] * 2
    )


def test_cancel_reaches_a_grandchild(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()
    stopped = {"child": threading.Event(), "grandchild": threading.Event()}

    @tool(read_only=True)
    def probe(q: str) -> str:
        """Wait."""
        started.set()
        release.wait(30)
        return "waited"

    def delegating(name: str, tool_name: str, tools: list[Tool]) -> Agent:
        first = {"tool_calls": [{"name": tool_name, "arguments": _arguments(tool_name, 0, 0)}]}

        def on_stop(event: Any) -> None:
            if event.type == "stop" and name in stopped:
                stopped[name].set()

        return Agent(ScriptedModel([first, "never"]), tools, observers=[on_stop])

    grandchild = delegating("grandchild", "probe", [probe])
    child = delegating("child", "grandchild", [grandchild.as_tool("grandchild", "G.")])
    root = delegating("root", "child", [child.as_tool("child", "C.")])
    outcome: list[Any] = []
    with Journal(tmp_path / "root.jsonl") as journal:
        runner = threading.Thread(target=lambda: outcome.append(root.run("go", journal=journal)))
        runner.start()
        assert started.wait(10)
        root.cancel()
        runner.join(10)
        assert stopped["grandchild"].wait(10) and stopped["child"].wait(10)
    release.set()
    assert outcome and outcome[0].stop_reason is StopReason.CANCELLED
    for name in ("root.child-1.jsonl", "root.child-1.grandchild-1.jsonl"):
        assert [e["stop_reason"] for e in _events(tmp_path / name) if e["type"] == "stop"] == [
            "cancelled"
        ]
    root_events = _events(tmp_path / "root.jsonl")
    assert [e["agent_path"] for e in root_events if e["type"] == "child_start"] == ["/child#1"]
    assert root_events[-1]["type"] == "stop"  # a child given up on writes nothing after it


def first_observation(root: Agent) -> Any:
    return json.loads(next(m.content for m in root.run("go").history if m.role == "tool"))


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_forced_answer_is_marked() -> None:
    @tool(read_only=True)
    def probe(q: str) -> str:
        """Probe."""
        return q

    counts = Counts()
    child = Agent(greedy(counts, ["probe"], 1), [probe], limits=Limits(max_model_calls=3))
    root = Agent(
        ScriptedModel([{"tool_calls": [{"name": "ask", "arguments": {"task": "t"}}]}, "ok"]),
        [child.as_tool("ask", "Ask.")],
    )
    seen = first_observation(root)
    assert seen["ok"] is True
    assert seen["output"]["forced"] is True
    assert seen["output"]["stop_reason"] == "final_answer"  # made to answer at its last call


def test_no_answer_is_an_error_observation() -> None:
    child = Agent(ScriptedModel([{"content": ""}] * 3), limits=Limits(max_format_errors=1))
    root = Agent(
        ScriptedModel([{"tool_calls": [{"name": "ask", "arguments": {"task": "t"}}]}, "ok"]),
        [child.as_tool("ask", "Ask.")],
    )
    seen = first_observation(root)
    assert seen["ok"] is False
    assert seen["error"].startswith("ask stopped without an answer (format_errors")


def test_a_typed_answer_comes_back_as_its_value() -> None:
    class City(BaseModel):
        name: str

    final = {"tool_calls": [{"name": "final_answer", "arguments": {"name": "Paris"}}]}
    child = Agent(ScriptedModel([final]), output_type=City, protocol="native")
    root = Agent(
        ScriptedModel([{"tool_calls": [{"name": "ask", "arguments": {"task": "t"}}]}, "ok"]),
        [child.as_tool("ask", "Ask.")],
    )
    seen = first_observation(root)
    assert seen["output"]["output"] == {"name": "Paris"}


def test_depth_is_bounded() -> None:
    asked: list[str] = []

    def level(name: str, tools: list[Tool]) -> Agent:
        def reply(request: ModelRequest) -> Any:
            asked.append(name)
            if any(m.role == "tool" for m in request.messages):
                return "done"
            target = tools[0].name if tools else None
            if target is None:
                return "leaf answer"
            return {"tool_calls": [{"name": target, "arguments": {"task": "deeper"}}]}

        return Agent(FunctionModel(reply), tools)

    deepest = level("d3", [])
    d2 = level("d2", [deepest.as_tool("d3", "D3.", max_depth=2)])
    d1 = level("d1", [d2.as_tool("d2", "D2.", max_depth=2)])
    root = level("d0", [d1.as_tool("d1", "D1.", max_depth=2)])
    root.run("go")
    assert "d3" not in asked  # refused before any model of its was asked
    d2_run_error = [n for n in asked if n == "d2"]
    assert len(d2_run_error) == 2  # d2 asked, got the refusal, answered


def test_the_root_approver_decides_first_for_a_child() -> None:
    ran: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send."""
        ran.append(to)
        return "sent"

    asked: list[tuple[str, str]] = []

    def root_says(call: Any, t: Tool) -> bool | str:
        asked.append(("root", call.arguments.get("to") or call.name))
        return call.arguments.get("to") != "eve" or "not eve"

    def child_says(call: Any, t: Tool) -> bool | str:
        asked.append(("child", call.arguments["to"]))
        return True

    turns = [
        {"tool_calls": [{"name": "send", "arguments": {"to": "ana"}}]},
        {"tool_calls": [{"name": "send", "arguments": {"to": "eve"}}]},
        "done",
    ]
    child = Agent(ScriptedModel(turns), [send], approve=child_says)
    mailer = child.as_tool("mailer", "Mails.")
    assert not mailer.read_only
    root = Agent(
        ScriptedModel([{"tool_calls": [{"name": "mailer", "arguments": {"task": "t"}}]}, "ok"]),
        [mailer],
        approve=root_says,
    )
    root.run("go")
    assert ran == ["ana"]
    assert asked == [("root", "mailer"), ("root", "ana"), ("child", "ana"), ("root", "eve")]


def test_read_only_is_refused_for_an_agent_with_tools_that_write() -> None:
    @tool
    def write(x: str) -> str:
        """Write."""
        return x

    with pytest.raises(ValueError, match="tools that write"):
        Agent(ScriptedModel(["x"]), [write]).as_tool("w", "W.", read_only=True)


def test_cost_sums_the_tree_and_splits_it_by_child(tmp_path: Path) -> None:
    usage = {"input_tokens": 100, "output_tokens": 10}

    def specialist(answer: str) -> Agent:
        return Agent(ScriptedModel([{"content": answer, "usage": usage}]), protocol="native")

    calls = [
        {"name": "one", "arguments": {"task": "a"}},
        {"name": "two", "arguments": {"task": "b"}},
    ]
    turns = [{"tool_calls": calls, "usage": usage}, {"content": "both", "usage": usage}]
    tools = [specialist("1").as_tool("one", "One."), specialist("2").as_tool("two", "Two.")]
    trace = tmp_path / "root.jsonl"
    with Journal(trace) as journal:
        result = Agent(ScriptedModel(turns), tools).run("go", journal=journal)
    assert result.usage.input_tokens == 400  # two calls of the root, one of each child
    report = usage_report(trace)
    assert report.total.input_tokens == 200  # the root's own calls
    assert report.tree_total == result.usage
    # the children ran at once: each is numbered in the order it started
    one, two = sorted(report.children, key=lambda c: c.tool)
    assert {one.agent_path, two.agent_path} in ({"/one#1", "/two#2"}, {"/one#2", "/two#1"})
    assert (one.model_calls, two.model_calls) == (1, 1)
    n = one.agent_path[-1]
    assert one.trace == str(tmp_path / f"root.one-{n}.jsonl")
    assert usage_report(one.trace).total.input_tokens == 100
    text = CliRunner().invoke(main, ["cost", str(trace)]).output
    assert f"sub-agent /one#{n} (final_answer): 1 model calls · input 100 · output 10" in text
    assert "tree total (this run and its sub-agents): input 400 · output 40" in text


def test_a_child_whose_call_the_root_defers_stops_the_tree_awaiting_it() -> None:
    """(The decision taken down the tree: tests/resume/test_tree_approvals.py.)"""
    ran: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send."""
        ran.append(to)
        return "sent"

    child_turns = [{"tool_calls": [{"name": "send", "arguments": {"to": "ana"}}]}, "done"]
    mailer = Agent(ScriptedModel(child_turns), [send]).as_tool("mailer", "Mails.")

    def root_says(call: Any, t: Tool) -> bool | Defer:
        return True if call.name == "mailer" else Defer()

    root = Agent(
        ScriptedModel([{"tool_calls": [{"name": "mailer", "arguments": {"task": "t"}}]}, "ok"]),
        [mailer],
        approve=root_says,
    )
    result = root.run("go")
    assert ran == []
    assert result.stop_reason is StopReason.AWAITING_APPROVAL
    assert [(p.name, p.agent_path, p.arguments) for p in result.pending] == [
        ("send", "/mailer#1", {"to": "ana"})
    ]
    assert [m.role for m in result.history][-1] == "assistant"  # the call to mailer waits


def test_a_typed_input_is_checked_and_becomes_the_task() -> None:
    class Question(BaseModel):
        city: str
        year: int

    tasks: list[str] = []

    def reply(request: ModelRequest) -> str:
        tasks.append(str(request.messages[-1].content))
        return "42"

    ask = Agent(FunctionModel(reply)).as_tool("ask", "Ask.", input_type=Question)
    assert ask.parameters["required"] == ["city", "year"]
    calls = [{"name": "ask", "arguments": {"city": "Oslo"}}]
    again = [{"name": "ask", "arguments": {"city": "Oslo", "year": 2020}}]
    root = Agent(ScriptedModel([{"tool_calls": calls}, {"tool_calls": again}, "ok"]), [ask])
    results = [json.loads(m.content) for m in root.run("go").history if m.role == "tool"]
    assert results[0]["ok"] is False and "year" in results[0]["error"]
    assert results[1] == {"ok": True, "output": {"answer": "42", "stop_reason": "final_answer"}}
    assert tasks == ['{"city":"Oslo","year":2020}']
