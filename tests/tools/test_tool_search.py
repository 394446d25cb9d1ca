"""Tool search: deferred tools are reached through ``search_tools`` and ``call_tool``, the
tools array never changes, a tool not found yet never runs, the real tool's schema, approver
and loop guard judge ``call_tool``, and the revealed set is the journal's (resume rebuilds
it)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from reactloop import Agent, Journal, Limits, ScriptedModel, tool
from reactloop.journal.writer import read_journal
from reactloop.messages import ToolCall
from reactloop.tools.base import Tool
from reactloop.tools.bm25 import BM25, words
from reactloop.tools.prepared import Defer, PreparedCall
from reactloop.tools.search import CALL_TOOL, SEARCH_TOOLS, ToolIndex, schema_tokens
from reactloop.tools.toolbox import Toolbox

LIMITS = Limits(max_model_calls=10, max_tool_calls=10, max_seconds=None)


def _family(prefix: str, verbs: list[str], runs: list[str]) -> list[Tool]:
    made = []
    for verb in verbs:
        name = f"{prefix}_{verb}"

        def run(target: str, _name: str = name) -> str:
            runs.append(_name)
            return f"{_name} {target}"

        made.append(
            Tool.from_schema(
                name,
                f"{verb.replace('_', ' ').capitalize()} in {prefix}.",
                {
                    "type": "object",
                    "properties": {"target": {"type": "string"}},
                    "required": ["target"],
                    "additionalProperties": False,
                },
                lambda target, _run=run: _run(target),
            )
        )
    return [dataclasses.replace(t, defer=True) for t in made]


def registry(runs: list[str]) -> list[Tool]:
    github = [
        "create_issue",
        "close_issue",
        "list_pulls",
        "merge_pull",
        "get_file",
        "create_branch",
        "list_commits",
        "add_comment",
        "search_code",
        "fork_repo",
    ]
    slack = ["send_message", "list_channels", "create_channel", "upload_file"]
    return _family("github", github, runs) + _family("slack", slack, runs)


def test_words_split_identifiers_and_fold_plurals() -> None:
    assert words("github_createIssue for the Pulls") == ["github", "create", "issue", "pull"]


def test_a_shared_prefix_does_not_flood_the_ranking() -> None:
    index = ToolIndex(registry([]))
    assert index.find("send a message on slack")[0] == "slack_send_message"
    assert index.find("create github issue")[0] == "github_create_issue"
    assert index.find("upload file")[0] == "slack_upload_file"  # not every github_* tool
    assert index.find("kubernetes pod") == []


def test_bm25_prefers_the_rarer_word() -> None:
    ranking = BM25([["github", "issue"], ["github", "pull"], ["github", "file"]])
    assert ranking.top(["github", "pull"], 3)[0][0] == 1


def test_the_model_sees_the_pair_and_the_other_tools_only() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    box = Toolbox([add, *registry([])])
    assert [s.name for s in box.specs] == ["add", SEARCH_TOOLS, CALL_TOOL]
    assert len(box.for_run().specs) == 3


def test_a_deferred_tool_runs_only_after_a_search_revealed_it() -> None:
    runs: list[str] = []
    box = Toolbox(registry(runs)).for_run()
    events: list[tuple[str, dict[str, Any]]] = []
    box.bind_events(lambda event: events.append((event.type, event.data())))
    direct = box.execute(ToolCall(id="1", name="slack_send_message", arguments='{"target":"x"}'))
    via = box.execute(call_tool("2", "slack_send_message", {"target": "x"}))
    assert not direct.ok and not via.ok and "not found by a search" in str(direct.error)
    assert runs == [] and not direct.executed and not via.executed
    found = box.execute(ToolCall(id="3", name=SEARCH_TOOLS, arguments='{"queries":["slack send"]}'))
    assert found.ok and found.output["tools"][0]["name"] == "slack_send_message"
    assert found.output["tools"][0]["parameters"]["required"] == ["target"]
    assert events[0][0] == "tool_search" and events[0][1]["queries"] == ["slack send"]
    assert "slack_send_message" in events[0][1]["revealed"]
    ran = box.execute(call_tool("4", "slack_send_message", {"target": "#general"}))
    assert ran.ok and ran.output == "slack_send_message #general" and ran.name == CALL_TOOL
    bad = box.execute(call_tool("5", "slack_send_message", {"channel": "#general"}))
    assert not bad.ok and "target" in str(bad.error) and runs == ["slack_send_message"]
    unknown = box.execute(call_tool("6", "nope", {}))
    assert "unknown tool 'nope'" in str(unknown.error)
    again = box.execute(ToolCall(id="7", name=SEARCH_TOOLS, arguments='{"queries":["slack"]}'))
    assert again.ok and "slack_send_message" not in events[1][1]["revealed"]


def test_each_run_starts_with_nothing_revealed() -> None:
    box = Toolbox(registry([]))
    first = box.for_run()
    first.execute(ToolCall(id="1", name=SEARCH_TOOLS, arguments='{"queries":["slack send"]}'))
    second = box.for_run()
    result = second.execute(call_tool("2", "slack_send_message", {"target": "x"}))
    assert not result.ok and "not found by a search" in str(result.error)


def test_search_turns_on_by_itself_beyond_a_share_of_the_context() -> None:
    tools = [dataclasses.replace(t, defer=None) for t in registry([])]
    assert Toolbox(tools).search is None  # 14 small schemas: far below 10% of 128k
    small = 256 * 4
    assert schema_tokens(t.spec for t in tools) > 0.1 * small
    keep = dataclasses.replace(tools[0], defer=False)
    box = Toolbox([keep, *tools[1:]], context_tokens=small)
    assert box.search is not None
    assert [s.name for s in box.specs] == [keep.name, SEARCH_TOOLS, CALL_TOOL]


def call_tool(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(
        id=call_id, name=CALL_TOOL, arguments=json.dumps({"name": name, "arguments": arguments})
    )


def turns_searching_then_calling() -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": SEARCH_TOOLS, "arguments": {"queries": ["github issue"]}}]},
        {
            "tool_calls": [
                {
                    "name": CALL_TOOL,
                    "arguments": {"name": "github_create_issue", "arguments": {"target": "bug"}},
                }
            ]
        },
        {"content": "done"},
    ]


def test_an_agent_run_journals_the_search_and_the_approver_judges_the_real_tool(
    tmp_path: Path,
) -> None:
    runs: list[str] = []
    asked: list[tuple[str, str, dict[str, Any] | None]] = []

    def approve(call: PreparedCall, real: Tool) -> bool:
        asked.append((call.name, real.name, call.arguments))
        return True

    trace = tmp_path / "run.jsonl"
    model = ScriptedModel(turns_searching_then_calling())
    with Journal(trace) as journal:
        agent = Agent(
            model,
            registry(runs),
            journal=journal,
            limits=LIMITS,
            approve=approve,
            protocol="native",
        )
        result = agent.run("file a bug")
    assert result.answer == "done" and runs == ["github_create_issue"]
    assert asked == [(CALL_TOOL, "github_create_issue", {"target": "bug"})]
    events = read_journal(trace)
    searches = [e for e in events if e["type"] == "tool_search"]
    assert len(searches) == 1 and "github_create_issue" in searches[0]["revealed"]
    start = next(e for e in events if e["type"] == "run_start")
    assert [t["name"] for t in start["tools"]] == [SEARCH_TOOLS, CALL_TOOL]
    sent = [[spec.name for spec in request.tools] for request in model.requests]
    assert sent == [[SEARCH_TOOLS, CALL_TOOL]] * 3  # the same array on every request


def test_resume_rebuilds_what_the_searches_revealed(tmp_path: Path) -> None:
    runs: list[str] = []
    trace = tmp_path / "deferred.jsonl"
    turns = turns_searching_then_calling()
    with Journal(trace) as journal:
        first = Agent(
            ScriptedModel(turns),
            registry(runs),
            journal=journal,
            limits=LIMITS,
            approve=lambda call, real: Defer(),
            protocol="native",
        ).run("file a bug")
    assert first.stop_reason == "awaiting_approval" and runs == []
    pending = first.pending[0].id
    second = Agent(ScriptedModel(turns), registry(runs), protocol="native").resume(
        trace, decisions={pending: True}
    )
    assert second.answer == "done" and runs == ["github_create_issue"]


def test_what_a_search_revealed_outlives_a_compaction() -> None:
    from reactloop import FunctionModel
    from reactloop.messages import ModelTurn
    from reactloop.models.base import ModelRequest

    @tool(defer=True, read_only=True)
    def fetch_page(n: int) -> str:
        """Fetch a page of the tea catalogue."""
        return f"page {n}: " + "oolong " * 400

    seen: list[str] = []

    def model(request: ModelRequest) -> ModelTurn:
        step = len(seen) + 1
        seen.append(str([m.content for m in request.messages if m.role == "tool"][-1:]))
        if step == 1:
            arguments = json.dumps({"queries": ["tea catalogue page"]})
            return ModelTurn(tool_calls=(ToolCall(id="s", name=SEARCH_TOOLS, arguments=arguments),))
        if step > 12:
            return ModelTurn(text="done")
        inner = {"name": "fetch_page", "arguments": {"n": step}}
        call = ToolCall(id=f"c{step}", name=CALL_TOOL, arguments=json.dumps(inner))
        return ModelTurn(tool_calls=(call,))

    limits = Limits(context_tokens=6000, context_policy="trim", max_model_calls=30)
    result = Agent(FunctionModel(model, native_tools=True), [fetch_page], limits=limits).run("go")
    assert result.answer == "done", result.error
    assert any(m.kind == "trimmed" for m in result.history)
    assert any(
        "fetch_page" in str(m.content) and "parameters" in str(m.content)
        for m in result.history
        if m.role == "tool" and m.kind != "trimmed"
    )  # trim cuts the long outputs; the search's short result stays
    assert "page 12: oolong" in seen[-1]  # the tool it revealed still runs


def test_the_embedded_models_grammar_covers_the_pair() -> None:
    from reactloop.models.local.grammar import json_schema_grammar, tool_call_schema

    specs = Toolbox(registry([])).specs
    grammar = json_schema_grammar(tool_call_schema(specs))
    assert '"\\"search_tools\\""' in grammar and '"\\"call_tool\\""' in grammar
    assert "github_create_issue" not in grammar  # deferred: not in the grammar either


def test_two_searches_in_one_turn_run_together_and_are_both_journaled(tmp_path: Path) -> None:
    first = {"name": SEARCH_TOOLS, "arguments": {"queries": ["slack message"]}}
    second = {"name": SEARCH_TOOLS, "arguments": {"queries": ["github pull"]}}
    turns = [{"tool_calls": [first, second]}, {"content": "done"}]
    trace = tmp_path / "run.jsonl"
    with Journal(trace) as journal:
        Agent(ScriptedModel(turns), registry([]), journal=journal, limits=LIMITS).run("x")
    searches = [e["queries"] for e in read_journal(trace) if e["type"] == "tool_search"]
    assert sorted(searches) == [["github pull"], ["slack message"]]
    unknown = Toolbox(registry([])).execute(ToolCall(id="1", name="nope", arguments="{}"))
    assert f"{SEARCH_TOOLS} finds the deferred ones" in str(unknown.error)


def test_the_agent_takes_the_share_of_its_context() -> None:
    tools = [dataclasses.replace(t, defer=None) for t in registry([])]
    model = ScriptedModel(["done"])
    assert Agent(model, tools).toolbox.search is None
    small = Agent(model, tools, limits=Limits(context_tokens=1024)).toolbox
    assert small.search is not None and len(small.specs) == 2


def test_the_terminal_approver_sees_the_real_tool_behind_call_tool() -> None:
    import io

    from reactloop.approval import TerminalApprover

    @tool(defer=True)
    def bash(command: str) -> str:
        """Run a shell command."""
        return "ran"

    box = Toolbox([bash]).for_run()
    box.execute(ToolCall(id="1", name=SEARCH_TOOLS, arguments='{"queries": ["shell command"]}'))
    prepared = box.prepare(call_tool("2", "bash", {"command": "ls -la"}))
    assert prepared.tool is bash and prepared.values == {"command": "ls -la"}
    allowed = TerminalApprover(["ls *"], input=io.StringIO(""), output=io.StringIO())
    assert allowed(prepared, bash) is True  # the command pattern applies to the real bash
    shown = io.StringIO()
    asked = TerminalApprover([], input=io.StringIO("n\n"), output=shown)
    assert asked(prepared, bash) is not True
    assert "$ ls -la" in shown.getvalue()
