"""A sub-agent never gets more than its parent (``reactloop.subagent_reach``): under a read-only
run a child that could write is refused before any model of it is asked; a child's ``bash``
never runs in a weaker sandbox than its parent's, also two levels down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactloop import Agent, FunctionModel, Journal, ScriptedModel, StopReason, Tool, read_journal
from reactloop.models.base import ModelRequest
from reactloop.sandbox.command import Mode
from reactloop.subagent_reach import Reach, ceiling_of
from reactloop.tools.context import ToolContext
from reactloop.tools.families import bash, files
from reactloop.tools.toolbox import Toolbox

ASK = {"name": "ask", "arguments": {"task": "look"}}


def file_tools(workspace: Path, *, read_only: bool) -> list[Tool]:
    return files.tools(ToolContext(workspace=workspace, read_only=read_only))


def shell(workspace: Path, mode: Mode, *, read_only: bool = False) -> list[Tool]:
    return bash.tools(ToolContext(workspace=workspace, sandbox_mode=mode, read_only=read_only))


def observations(result: Any) -> list[str]:
    return [m.content for m in result.history if m.role == "tool"]


WRITER_REFUSED = (
    "ask could write (edit_file, write_file), and the run that calls it is read-only: "
    "a sub-agent never gets more than its parent"
)


def test_a_read_only_agent_with_a_writing_child_is_refused_when_built(tmp_path: Path) -> None:
    child = Agent(ScriptedModel(["written"]), file_tools(tmp_path, read_only=False))
    with pytest.raises(ValueError) as refused:
        Agent(
            ScriptedModel(["no"]),
            [*file_tools(tmp_path, read_only=True), child.as_tool("ask", "Ask.")],
        )
    assert str(refused.value) == WRITER_REFUSED


def test_a_read_only_run_refuses_a_child_that_could_write_when_called(tmp_path: Path) -> None:
    """The check when a child starts (a toolbox changed after the agent was built: the
    check at construction cannot see it)."""
    reader = Agent(ScriptedModel(["read"]), file_tools(tmp_path, read_only=True))
    child_model = ScriptedModel(["written"])
    writer = Agent(child_model, file_tools(tmp_path, read_only=False))
    root = Agent(
        ScriptedModel([{"tool_calls": [ASK]}, "it refused"]),
        [*file_tools(tmp_path, read_only=True), reader.as_tool("ask", "Ask.")],
    )
    root.toolbox = root.toolbox.with_tools({"ask": writer.as_tool("ask", "Ask.")})
    result = root.run("go")
    assert result.answer == "it refused"
    (seen,) = observations(result)
    assert json.loads(seen) == {"ok": False, "error": f"not run: {WRITER_REFUSED}"}
    assert child_model.requests == []  # no model of the child was asked


def test_a_writer_two_levels_down_is_named_and_refused(tmp_path: Path) -> None:
    writer = Agent(ScriptedModel(["w"]), file_tools(tmp_path, read_only=False))
    reader = Agent(ScriptedModel(["r"]), [writer.as_tool("helper", "Help.")])  # no mode
    with pytest.raises(
        ValueError, match=r"ask could write \(helper: edit_file, helper: write_file\)"
    ):
        Agent(
            ScriptedModel(["no"]),
            [*shell(tmp_path, "auto", read_only=True), reader.as_tool("ask", "Ask.")],
        )


def test_a_read_only_child_runs_under_a_read_only_parent(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    listing = {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt"}}]}
    child = Agent(
        ScriptedModel([listing, "hello"]),
        [*file_tools(tmp_path, read_only=True), *shell(tmp_path, "auto", read_only=True)],
    )
    root = Agent(
        ScriptedModel([{"tool_calls": [ASK]}, "done"]),
        [*file_tools(tmp_path, read_only=True), child.as_tool("ask", "Ask.")],
    )
    result = root.run("go")
    assert (result.answer, result.stop_reason) == ("done", StopReason.FINAL_ANSWER)
    assert json.loads(observations(result)[0])["output"]["answer"] == "hello"


def test_a_parent_that_sets_no_mode_lets_a_writer_run(tmp_path: Path) -> None:
    """A coordinator whose only tools are agents gives its children what they were built with."""
    write = {"name": "write_file", "arguments": {"path": "out.txt", "content": "x"}}
    child = Agent(
        ScriptedModel([{"tool_calls": [write]}, "written"]), file_tools(tmp_path, read_only=False)
    )
    root = Agent(ScriptedModel([{"tool_calls": [ASK]}, "done"]), [child.as_tool("ask", "Ask.")])
    assert root.run("go").answer == "done"
    assert (tmp_path / "out.txt").read_text() == "x"


def command_sandbox(result: Any) -> str:
    """What the child's ``bash`` said of its sandbox (its observation, through its answer)."""
    return str(json.loads(observations(result)[0])["output"]["answer"])


def call_then_relay(call: dict[str, Any], relay: Any) -> FunctionModel:
    """A model that makes ``call``, then answers with ``relay(observation)``."""

    def reply(request: ModelRequest) -> Any:
        last = request.messages[-1]
        return {"tool_calls": [call]} if last.role != "tool" else relay(json.loads(last.content))

    return FunctionModel(reply)


def child_running_bash(workspace: Path, mode: Mode) -> Agent:
    """A child that runs ``echo`` and answers with the ``sandbox`` its command ran in (or the
    error, when that sandbox cannot run here)."""
    echo = {"name": "bash", "arguments": {"command": "echo hi"}}

    def relay(seen: dict[str, Any]) -> str:
        return str(seen["output"]["sandbox"] if seen["ok"] else seen["error"])

    return Agent(call_then_relay(echo, relay), shell(workspace, mode))


def stronger_or_missing(seen: str) -> bool:
    return seen == "bwrap" or "bwrap sandbox is not available" in seen


def test_a_childs_bash_is_narrowed_to_its_parents_sandbox(tmp_path: Path) -> None:
    child = child_running_bash(tmp_path, "weak")
    root = Agent(
        ScriptedModel([{"tool_calls": [ASK]}, "done"]),
        [*shell(tmp_path, "bwrap"), child.as_tool("ask", "Ask.")],
    )
    with Journal(tmp_path / "root.jsonl") as journal:
        result = root.run("go", journal=journal)
    assert stronger_or_missing(command_sandbox(result)), command_sandbox(result)
    start = read_journal(tmp_path / "root.ask-1.jsonl")[0]
    assert start["config"]["reach"] == {"read_only": False, "sandbox": "bwrap"}
    assert "Sandbox: weak" not in json.dumps(start["tools"])


def test_the_sandbox_holds_through_a_coordinator_without_bash(tmp_path: Path) -> None:
    leaf = child_running_bash(tmp_path, "weak")
    relay = {"name": "leaf", "arguments": {"task": "run it"}}
    middle = Agent(
        call_then_relay(relay, lambda seen: str(seen["output"]["answer"])),
        [leaf.as_tool("leaf", "Runs.")],
    )
    root = Agent(
        ScriptedModel([{"tool_calls": [ASK]}, "done"]),
        [*shell(tmp_path, "bwrap"), middle.as_tool("ask", "Ask.")],
    )
    assert stronger_or_missing(command_sandbox(root.run("go")))


def test_a_stronger_child_sandbox_is_kept(tmp_path: Path) -> None:
    box = Toolbox(shell(tmp_path, "weak"))
    ceiling = ceiling_of(box, {})
    assert ceiling == Reach(False, "weak")
    child = child_running_bash(tmp_path, "bwrap")
    root = Agent(
        ScriptedModel([{"tool_calls": [ASK]}, "done"]),
        [*shell(tmp_path, "weak"), child.as_tool("ask", "Ask.")],
    )
    assert stronger_or_missing(command_sandbox(root.run("go")))


@pytest.mark.parametrize(
    ("given", "inherited", "narrowest"),
    [
        (Reach(False, "weak"), Reach(True, "bwrap"), Reach(True, "bwrap")),
        (Reach(False, None), Reach(False, "auto"), Reach(False, "auto")),
        (Reach(True, "bwrap"), Reach(), Reach(True, "bwrap")),
    ],
)
def test_a_ceiling_is_the_narrower_of_the_two(
    given: Reach, inherited: Reach, narrowest: Reach
) -> None:
    assert given.within(inherited) == inherited.within(given) == narrowest


def test_a_toolbox_replaces_only_the_tools_it_has(tmp_path: Path) -> None:
    box = Toolbox(shell(tmp_path, "weak"))
    (narrow,) = shell(tmp_path, "bwrap")
    assert box.with_tools({"bash": narrow}).get("bash") is narrow
    assert box.get("bash") is not narrow
    with pytest.raises(ValueError, match="cannot replace"):
        box.with_tools({"other": narrow})
