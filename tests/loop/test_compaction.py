"""Context compaction against fake servers that refuse what the real providers refuse.

Runs of parallel tool calls with long results overflow a small context limit; ``trim`` and
``summarize`` keep them going. Both native protocols are driven over HTTP (OpenAI chat and
Anthropic messages); each server answers HTTP 400 to an orphaned call or result, a split
parallel batch, or a result the renderer had to repair. The recorded requests then show the
cache invariants: each request extends the one before except at a compaction, where the prefix
before the compacted block is byte-identical; the summarising request extends the last request
with one user message, with the same system prompt and tools.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_runs import (
    STEPS,
    SUMMARY_ASKED,
    Script,
    anthropic_orphans,
    common_prefix,
    fetch,
    openai_problem,
    openai_responder,
    run,
)
from reactloop import (
    Agent,
    FunctionModel,
    Journal,
    Limits,
    Message,
    ModelTurn,
    StopReason,
    ToolCall,
)
from reactloop.history import History
from reactloop.journal.event_value import JournalEvent
from reactloop.journal.schema import WarningEvent
from reactloop.journal.warning_kinds import WarningKind
from reactloop.journal.writer import read_journal
from reactloop.loop.budget import Budget
from reactloop.loop.compaction import ContextKeeper
from reactloop.loop.settings import RunSettings
from reactloop.loop.silent_truncation import tokens_of
from reactloop.models.anthropic.request import render_messages
from reactloop.models.base import ModelRequest
from reactloop.models.openai.model import OpenAIChatModel
from reactloop.models.openai.request import NOT_EXECUTED, render_history
from reactloop.testing.fake_openai import FakeOpenAIServer, RecordedRequest
from reactloop.testing.openai_replies import Reply, json_reply
from reactloop.tools.toolbox import Toolbox


def compactions(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "compaction"]


def assert_cache_invariants(
    script: Script, events: list[dict[str, Any]], provider: str, history: list[Message]
) -> None:
    bodies = script.bodies
    system_and_tools = {json.dumps([b.get("system"), b.get("tools")]) for b in bodies}
    assert len(system_and_tools) == 1  # the summarising call too: the run's own prefix
    breaks = []
    for before, after in itertools.pairwise(bodies):
        shared = common_prefix(before["messages"], after["messages"])
        if shared < len(before["messages"]):
            breaks.append(shared)
        summary_asked = SUMMARY_ASKED in json.dumps(after["messages"][-1])
        if summary_asked:  # the summarising call reads the whole previous prompt
            assert shared == len(before["messages"]) and after["tool_choice"] in (
                "none",
                {"type": "none"},
            )
    done = compactions(events)
    assert len(breaks) == len(done)
    if provider == "openai":  # one wire message per history message: the same indexes
        assert breaks == [event["start"] for event in done]
    else:  # results share a user turn, and so may a summary with the task: count blocks
        assert_blocks_kept(bodies, done, history)


def blocks(messages: list[dict[str, Any]]) -> list[str]:
    """Anthropic wire messages as the sequence of their content blocks, each with its role."""
    flat = []
    for wire in messages:
        content = wire["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        flat += [json.dumps([wire["role"], part], sort_keys=True) for part in parts]
    return flat


def assert_blocks_kept(
    bodies: list[dict[str, Any]], done: list[dict[str, Any]], history: list[Message]
) -> None:
    """At each compaction, the requests before and after it share, byte for byte, every
    content block of the history before the block's start (which the run never changes)."""
    breaks = []
    for before, after in itertools.pairwise(bodies):
        old, new = blocks(before["messages"]), blocks(after["messages"])
        shared = common_prefix(old, new)
        if shared < len(old):
            breaks.append(shared)
    kept = [m for m in history if m.role != "system"]
    expected = []
    for event in done:  # the blocks of what precedes the start, less the renderer's answers
        rendered = blocks(render_messages(kept[: event["start"] - 1]))
        expected.append(sum(json.dumps(NOT_EXECUTED)[1:-1] not in block for block in rendered))
    assert breaks == expected


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("policy", ["trim", "summarize"])
def test_compaction_keeps_every_request_valid_and_the_prefix_cached(
    provider: str, policy: str, tmp_path: Path
) -> None:
    result, script, events = run(provider, policy, tmp_path)
    assert script.refused == []
    assert result.stop_reason is StopReason.FINAL_ANSWER, result.error
    assert result.tool_calls == 2 * STEPS
    done = compactions(events)
    assert done and all(e["policy"] == policy for e in done)
    assert all(e["tokens_after"] < e["tokens_before"] for e in done)
    assert_cache_invariants(script, events, provider, list(result.history))
    assert_valid_history(list(result.history))
    assert result.history[1].kind == "task" and result.history[0].role == "system"
    if policy == "summarize":
        summaries = [m for m in result.history if m.kind == "summary"]
        assert summaries and "tea prices" in summaries[-1].content
        assert all("summary_usage" in e for e in done)
        assert result.model_calls == STEPS + 1 + len(done)
    else:
        assert any(m.kind == "trimmed" for m in result.history)


def assert_valid_history(history: list[Message]) -> None:
    """The run's final history, rendered offline by both adapters, needs no repair."""
    assert openai_problem(render_history(history)) is None
    assert anthropic_orphans(render_messages(history)) is None


def test_the_default_policy_stops_with_max_tokens_and_says_how_to_go_on(tmp_path: Path) -> None:
    result, script, events = run("openai", "none", tmp_path)
    assert result.stop_reason is StopReason.MAX_TOKENS
    assert "--context-policy trim or summarize" in (result.error or "")
    assert compactions(events) == []
    assert len(json.dumps(script.bodies[-1]["messages"])) // 4 < 9000


def test_remind_repeats_the_task_after_each_compaction(tmp_path: Path) -> None:
    result, _, events = run("openai", "trim", tmp_path, remind=True)
    reminders = [m for m in result.history if m.content.startswith("Reminder of the task")]
    assert len(reminders) == len(compactions(events)) >= 1
    assert "cheapest tea" in reminders[0].content


def test_a_parallel_batch_is_never_split_by_a_summary(tmp_path: Path) -> None:
    result, _, events = run("openai", "summarize", tmp_path)
    history = list(result.history)
    for event in compactions(events):
        assert len(event["call_ids"]) % 2 == 0  # whole turns of two calls each
    kept_calls = {c.id for m in history for c in m.tool_calls}
    kept_results = {m.tool_call_id for m in history if m.role == "tool"}
    assert kept_calls == kept_results


def test_tokens_of_counts_calls_and_reasoning() -> None:
    plain = tokens_of([Message(role="user", content="x" * 400)])
    assert plain == 104
    assert tokens_of([Message(role="assistant", content="x" * 400, reasoning="y" * 40)]) == 114


class Recorder:
    """The run's events, kept (what the loop's ``Emitter`` would journal)."""

    observed = True

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, event: JournalEvent) -> None:
        self.events.append((event.type, event.data()))

    def warn(self, kind: WarningKind | str, message: str, **fields: Any) -> None:
        self.emit(WarningEvent(kind=kind, message=message, **fields))

    def warn_once(self, kind: WarningKind | str, message: str) -> None:
        if ("warning", {"kind": kind, "message": message}) not in self.events:
            self.warn(kind, message)


def unit(index: int, calls: int, size: int, answered: int) -> list[Message]:
    """An assistant turn of ``calls`` calls, ``answered`` of them with a result of ``size``."""
    ids = [f"c{index}_{n}" for n in range(calls)]
    turn = Message(
        role="assistant",
        content=f"step {index}",
        tool_calls=tuple(ToolCall(id=i, name="fetch", arguments='{"page": 1}') for i in ids),
    )
    results = [
        Message(role="tool", content=json.dumps({"ok": True, "output": "x" * size}),
                tool_call_id=i, name="fetch")
        for i in ids[:answered]
    ]  # fmt: skip
    for i in ids[answered:]:
        results.append(Message(role="tool", content='{"ok": false, "error": "not run"}',
                               tool_call_id=i, name="fetch"))  # fmt: skip
    return [turn, *results]


UNITS = st.lists(
    st.tuples(
        st.integers(1, 4),  # calls in the turn (a parallel batch when more than one)
        st.integers(0, 6000),  # characters of each result
        st.integers(0, 4),  # how many are answered with that result
        st.booleans(),  # a harness note after the results
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(units=UNITS, policy=st.sampled_from(["trim", "summarize"]), limit=st.integers(256, 20_000))
def test_any_compaction_keeps_pairs_batches_and_the_prefix(
    units: list[tuple[int, int, int, bool]], policy: str, limit: int
) -> None:
    messages = [
        Message(role="system", content="be brief"),
        Message(role="user", content="the task", kind="task"),
    ]
    for index, (calls, size, answered, note) in enumerate(units):
        messages += unit(index, calls, size, min(answered, calls))
        if note:
            messages.append(Message(role="user", content="a note", kind="notice"))
    history = History(messages)
    model = FunctionModel(lambda request: "the summary")
    limits = Limits(context_tokens=limit, context_policy=policy, max_model_calls=50)
    toolbox = Toolbox([fetch])
    run_settings = RunSettings(model=model, toolbox=toolbox, protocol="native", limits=limits)
    events = Recorder()
    keeper = ContextKeeper(run_settings, Budget(limits), history, events, limit=limit)
    before = list(history)
    checked = keeper.check(1, len(history) - 1)
    after = list(history)
    assert openai_problem(render_history(after)) is None
    assert anthropic_orphans(render_messages(after)) is None
    done = [data for kind, data in events.events if kind == "compaction"]
    if not done:
        assert after == before
        return
    start = done[0]["start"]
    assert start >= 2 and all(a is b for a, b in zip(after[:start], before[:start], strict=False))
    assert checked is not None and checked.stop is None
    last_turn = max(i for i, m in enumerate(before) if m.role == "assistant")
    tail = before[last_turn:]
    assert all(a is b for a, b in zip(after[-len(tail) :], tail, strict=True))  # the latest turn
    kept_calls = {c.id for m in after for c in m.tool_calls}
    assert kept_calls == {m.tool_call_id for m in after if m.role == "tool"}


def under_reporting(script: Script, reported: int | None) -> Callable[[RecordedRequest], Reply]:
    """A server that counts ``reported`` prompt tokens whatever it was sent (None: honestly),
    as Ollama does once it has cut a history to its window."""
    honest = openai_responder(script)

    def answer(request: RecordedRequest) -> Reply:
        reply = honest(request)
        if reported is None:
            return reply
        body = json.loads(reply.body)
        body["usage"] = {"prompt_tokens": reported, "completion_tokens": 20}
        return json_reply(body)

    return answer


@pytest.mark.parametrize("reported", [2048, None])
def test_a_server_that_silently_cuts_the_history_is_named_once(
    reported: int | None, tmp_path: Path
) -> None:
    script = Script()
    limits = Limits(max_model_calls=40, max_tool_calls=60)
    with (
        FakeOpenAIServer(responder=under_reporting(script, reported)) as server,
        Journal(tmp_path / "run.jsonl") as journal,
    ):
        model = OpenAIChatModel(model="fake", base_url=server.base_url, max_retries=0)
        result = Agent(model, [fetch], limits=limits, journal=journal).run("Find the tea.")
    assert result.stop_reason is StopReason.FINAL_ANSWER
    found = [w for w in result.warnings if w.startswith("silent_truncation")]
    events = [
        e for e in read_journal(tmp_path / "run.jsonl")
        if e["type"] == "warning" and e["kind"] == "silent_truncation"
    ]  # fmt: skip
    if reported is None:
        assert found == [] and events == []
        return
    assert len(found) == len(events) == 1
    assert "OLLAMA_CONTEXT_LENGTH" in found[0] and "--ctx-size" in found[0]
    assert events[0]["reported"] == 2048 and events[0]["estimated"] > 4096


def test_trim_under_text_react_keeps_the_format_prompt_and_goes_on() -> None:
    """The text protocol renders the history into its own messages: after a compaction it
    renders again, and its system prompt (tools included) stays the same."""
    prompts: list[str] = []
    sizes: list[int] = []

    def model(request: ModelRequest) -> ModelTurn:
        prompts.append(request.messages[0].content)
        sizes.append(sum(len(m.content) for m in request.messages))
        step = len(prompts)
        if step > 12:
            return ModelTurn(text="Thought: done\nAction: Finish[tea12-0]")
        return ModelTurn(text=f"Thought: next page\nAction: fetch[{step}]")

    limits = Limits(context_tokens=6000, context_policy="trim", max_model_calls=30)
    agent = Agent(FunctionModel(model, native_tools=False), [fetch], limits=limits)
    result = agent.run("Find the cheapest tea.")
    assert result.stop_reason is StopReason.FINAL_ANSWER, result.error
    assert any(m.kind == "trimmed" for m in result.history)
    assert len(set(prompts)) == 1  # the format prompt and the tools, unchanged
    assert max(sizes) < 6000 * 4 and sizes[-1] < max(sizes)
